import { AsyncLocalStorage } from "node:async_hooks";

/** A fetch function as the AI SDK providers accept it. */
export type FetchFunction = typeof globalThis.fetch;

const perCallBody = new AsyncLocalStorage<Record<string, unknown>>();

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** Deep-merge `extra` into `base` (objects merge, everything else is replaced). Returns a new object. */
export function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(out[k]) && isPlainObject(v) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

/** Run `fn` so that requests it sends get `body` merged into their JSON body. */
export function runWithExtraBody<T>(body: Record<string, unknown> | undefined, fn: () => T): T {
  return perCallBody.run(body ?? {}, fn);
}

/**
 * A fetch that merges extra fields into JSON request bodies: the model
 * entry's static passthrough keys (`extra_body`, vendor kwargs) and the
 * per-call ones set with {@link runWithExtraBody}. This is how DeerFlow's
 * `extra_body`/`model_kwargs` reach the wire with any AI SDK provider.
 */
export function createRequestFetch(staticBody: Record<string, unknown> = {}, baseFetch?: FetchFunction): FetchFunction {
  const wrapped = async (input: Parameters<FetchFunction>[0], init?: Parameters<FetchFunction>[1]) => {
    const doFetch = baseFetch ?? globalThis.fetch;
    const callBody = perCallBody.getStore() ?? {};
    if (init && typeof init.body === "string" && (Object.keys(staticBody).length || Object.keys(callBody).length)) {
      try {
        const parsed = JSON.parse(init.body) as unknown;
        if (isPlainObject(parsed)) {
          const merged = deepMerge(deepMerge(parsed, staticBody), callBody);
          return doFetch(input, { ...init, body: JSON.stringify(merged) });
        }
      } catch {
        // not JSON: send unchanged
      }
    }
    return doFetch(input, init);
  };
  return wrapped as FetchFunction;
}
