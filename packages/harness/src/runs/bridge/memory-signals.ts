import type { RunSignal, RunSignals } from "../backend-types";

/** Call each listener; one that throws must not keep the signal from the others. */
export function dispatchSignal(listeners: readonly ((signal: RunSignal) => void)[], signal: RunSignal): void {
  for (const l of listeners) {
    try {
      l(signal);
    } catch {
      // A listener's own failure; the run service logs its own errors.
    }
  }
}

/**
 * In-process run signals: `publish` reaches this process's listeners
 * synchronously (before the returned promise settles). Nothing crosses
 * processes.
 */
export function createMemoryRunSignals(): RunSignals {
  let listeners: ((signal: RunSignal) => void)[] = [];
  return {
    async publish(signal: RunSignal): Promise<void> {
      dispatchSignal(listeners, signal);
    },
    subscribe(listener: (signal: RunSignal) => void): () => void {
      listeners = [...listeners, listener];
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    async close(): Promise<void> {
      listeners = [];
    },
  };
}
