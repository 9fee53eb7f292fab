/** A signal that aborts when any of its sources does, until it is released. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Detach from the sources (call it when the work the signal guards is over). */
  release(): void;
}

const NOTHING_TO_RELEASE = (): void => {};

/**
 * Link abort signals: the result aborts, with the source's reason, as soon
 * as any source does. Unlike `AbortSignal.any`, it can be detached: its
 * listeners come off the sources on {@link LinkedSignal.release}. A source
 * may live much longer than the work (a caller's signal reused across runs,
 * a sandbox's lifetime), and on Node 20 `AbortSignal.any` keeps a reference
 * in every source for every signal it ever made. With a single source that
 * source is returned as is.
 */
export function linkSignals(sources: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const live = sources.filter((s): s is AbortSignal => s !== undefined);
  if (live.length === 1) return { signal: live[0], release: NOTHING_TO_RELEASE };
  const controller = new AbortController();
  const already = live.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, release: NOTHING_TO_RELEASE };
  }
  const release = (): void => {
    for (const s of live) s.removeEventListener("abort", onAbort);
  };
  const onAbort = (event: Event): void => {
    release();
    controller.abort((event.target as AbortSignal).reason);
  };
  for (const s of live) s.addEventListener("abort", onAbort);
  return { signal: controller.signal, release };
}
