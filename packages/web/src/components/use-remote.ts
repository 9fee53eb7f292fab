import { useCallback, useEffect, useState } from "react";

/** Data a page loads from the gateway: loaded on mount, reloaded by `refresh()`, with the last error. */
export interface Remote<T> {
  value: T | undefined;
  error: string | undefined;
  setError(error: string | undefined): void;
  refresh(): Promise<void>;
  /**
   * Run `change` (a write to the gateway), then clear the error and reload; a failure lands in
   * `error` instead. Never throws. `change` returns `false` when the page is leaving (nothing to reload).
   */
  run(change: () => Promise<unknown>): Promise<void>;
}

/** Load `fetcher()` on mount; `refresh()` reloads it; a failure lands in `error` (the last value stays). */
export function useRemote<T>(fetcher: () => Promise<T>): Remote<T> {
  const [value, setValue] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const refresh = useCallback(async () => {
    try {
      setValue(await fetcher());
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    }
  }, [fetcher]);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  const run = useCallback(
    async (change: () => Promise<unknown>) => {
      try {
        if ((await change()) === false) return;
        setError(undefined);
        await refresh();
      } catch (err) {
        setError((err as Error).message);
      }
    },
    [refresh],
  );
  return { value, error, setError, refresh, run };
}
