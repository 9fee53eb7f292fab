import { Client } from "@langchain/langgraph-sdk/client";
import { csrfHeader } from "./rest";

/** The LangGraph SDK client pointed at `${origin}/api/langgraph`, copying the CSRF cookie on writes. */
export function createApiClient(origin: string = location.origin): Client {
  return new Client({
    apiUrl: `${origin}/api/langgraph`,
    // Fail fast enough for the UI to say "server unreachable" instead of retrying silently for a minute.
    callerOptions: { maxRetries: 1 },
    onRequest: (_url, init) => {
      const method = (init.method ?? "GET").toUpperCase();
      if (method === "GET" || method === "HEAD") return init;
      const headers = new Headers(init.headers);
      for (const [k, v] of Object.entries(csrfHeader())) headers.set(k, v);
      return { ...init, headers };
    },
  });
}

/** The stream modes the UI asks for. */
export const STREAM_MODES = ["values", "messages-tuple", "updates", "custom"] as const;
