import { Client } from "@langchain/langgraph-sdk/client";
import { apiFetch } from "./http";

/**
 * The LangGraph SDK client pointed at `${origin}/api/langgraph`. Its requests go through
 * {@link apiFetch}, so writes carry the CSRF token and a 401 leads to the login page.
 */
export function createApiClient(origin: string = location.origin): Client {
  return new Client({
    apiUrl: `${origin}/api/langgraph`,
    // Fail fast enough for the UI to say "server unreachable" instead of retrying silently for a minute.
    callerOptions: { maxRetries: 1, fetch: (input: RequestInfo | URL, init?: RequestInit) => apiFetch(input, init) },
  });
}

/** The stream modes the UI asks for. */
export const STREAM_MODES = ["values", "messages-tuple", "updates", "custom"] as const;
