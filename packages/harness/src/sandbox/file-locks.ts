/**
 * Keyed async mutexes: `withKeyedLock(key, fn)` runs `fn` after every earlier
 * holder of the same key finished. Used by `str_replace` (per sandbox+path)
 * and ReadBeforeWrite (per thread+path). Keys are dropped once idle.
 */

const tails = new Map<string, Promise<void>>();

/** Run `fn` exclusively for `key`. */
export async function withKeyedLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** Number of keys currently locked or queued (for tests). */
export function activeLockCount(): number {
  return tails.size;
}
