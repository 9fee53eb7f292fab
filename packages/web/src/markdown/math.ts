/** Lazy KaTeX: loaded on first sight of math, then every renderer re-renders. */

type Katex = { renderToString(tex: string, opts: { displayMode: boolean; throwOnError: boolean }): string };

let katex: Katex | undefined;
let loading: Promise<void> | undefined;
const waiters = new Set<() => void>();

/** The loaded KaTeX instance, if any. */
export function loadedKatex(): Katex | undefined {
  return katex;
}

/** Starts loading KaTeX (JS + CSS) once; `onReady` is called when it is available. */
export function requestKatex(onReady?: () => void): void {
  if (katex) return;
  if (onReady) waiters.add(onReady);
  if (loading) return;
  loading = Promise.all([import("katex"), import("katex/dist/katex.min.css")])
    .then(([mod]) => {
      katex = ((mod as { default?: Katex }).default ?? mod) as Katex;
      for (const w of waiters) w();
      waiters.clear();
    })
    .catch(() => {
      loading = undefined;
    });
}

/** Removes a waiter (component unmounted). */
export function cancelKatexWaiter(fn: () => void): void {
  waiters.delete(fn);
}
