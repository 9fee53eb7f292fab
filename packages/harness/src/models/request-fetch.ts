/** A fetch function as the AI SDK providers accept it. */
export type FetchFunction = typeof globalThis.fetch;

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

/**
 * A fetch that merges `body` into every JSON request body it sends: how a
 * model entry's passthrough keys (`extra_body`, `model_kwargs`, vendor
 * kwargs) reach the wire with any AI SDK provider. The fields are bound when
 * the fetch is made, so concurrent calls never see each other's. Typed
 * settings (reasoning effort, thinking) never travel this way: the provider
 * mapping hands them to the AI SDK as its own options.
 */
export function createRequestFetch(body: Record<string, unknown> = {}, baseFetch?: FetchFunction): FetchFunction {
  if (!Object.keys(body).length) return baseFetch ?? ((input, init) => globalThis.fetch(input, init));
  const wrapped = async (input: Parameters<FetchFunction>[0], init?: Parameters<FetchFunction>[1]) => {
    const doFetch = baseFetch ?? globalThis.fetch;
    if (init && typeof init.body === "string") {
      try {
        const parsed = JSON.parse(init.body) as unknown;
        if (isPlainObject(parsed)) return doFetch(input, { ...init, body: JSON.stringify(deepMerge(parsed, body)) });
      } catch {
        // not JSON: send unchanged
      }
    }
    return doFetch(input, init);
  };
  return wrapped as FetchFunction;
}
