/** A fetch function as the AI SDK providers accept it. */
export type FetchFunction = typeof globalThis.fetch;

/**
 * The request header that carries a call's extra body fields from the model
 * call to {@link createRequestFetch}, which removes it before sending. A
 * header travels with its own request whatever else runs concurrently. (An
 * AsyncLocalStorage would do the same, but on this Node version using one turns
 * on promise hooks for the whole process: every promise pays for them after the
 * first model call.)
 */
const EXTRA_BODY_HEADER = "x-deerflow-extra-body";

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
 * Call headers that make the request of one model call get `body` merged into
 * its JSON body (by a fetch from {@link createRequestFetch}); undefined when
 * there is nothing to add.
 */
export function extraBodyHeaders(body: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!body || !Object.keys(body).length) return undefined;
  return { [EXTRA_BODY_HEADER]: Buffer.from(JSON.stringify(body), "utf8").toString("base64url") };
}

/** Take the extra-body header out of a request's headers: the headers to send, and the fields it carried. */
function takeExtraBody(headers: NonNullable<Parameters<FetchFunction>[1]>["headers"]): { headers: typeof headers; body: Record<string, unknown> } {
  let encoded: string | null | undefined;
  let rest = headers;
  if (headers instanceof Headers) {
    encoded = headers.get(EXTRA_BODY_HEADER);
    if (encoded !== null) {
      rest = new Headers(headers);
      rest.delete(EXTRA_BODY_HEADER);
    }
  } else if (Array.isArray(headers)) {
    const kept = headers.filter(([k, v]) => (k.toLowerCase() === EXTRA_BODY_HEADER ? ((encoded = v), false) : true));
    if (encoded !== undefined) rest = kept;
  } else if (headers) {
    const kept: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k.toLowerCase() === EXTRA_BODY_HEADER) encoded = v;
      else kept[k] = v;
    }
    if (encoded !== undefined) rest = kept;
  }
  if (encoded === undefined || encoded === null) return { headers, body: {} };
  try {
    const parsed = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8")) as unknown;
    return { headers: rest, body: isPlainObject(parsed) ? parsed : {} };
  } catch {
    return { headers: rest, body: {} };
  }
}

/**
 * A fetch that merges extra fields into JSON request bodies: the model
 * entry's static passthrough keys (`extra_body`, vendor kwargs) and the
 * per-call ones a model call sends with {@link extraBodyHeaders}. This is how
 * DeerFlow's `extra_body`/`model_kwargs` reach the wire with any AI SDK provider.
 */
export function createRequestFetch(staticBody: Record<string, unknown> = {}, baseFetch?: FetchFunction): FetchFunction {
  const wrapped = async (input: Parameters<FetchFunction>[0], given?: Parameters<FetchFunction>[1]) => {
    const doFetch = baseFetch ?? globalThis.fetch;
    let init = given;
    let callBody: Record<string, unknown> = {};
    if (init?.headers) {
      const taken = takeExtraBody(init.headers);
      if (taken.headers !== init.headers) init = { ...init, headers: taken.headers };
      callBody = taken.body;
    }
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
