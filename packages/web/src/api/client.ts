/**
 * The UI's client of the LangGraph-compatible API under `/api/langgraph`: only the calls the UI makes
 * (threads, runs and their streams), typed by the gateway's wire types. Every request goes through
 * {@link apiFetch}, so writes carry the CSRF token and a 401 leads to the login page.
 */
import type {
  WireRun,
  WireRunCreate,
  WireStateUpdate,
  WireStreamMode,
  WireStreamPart,
  WireThread,
  WireThreadCreate,
  WireThreadSearch,
  WireThreadState,
} from "@deerflow-ts/harness/wire";
import { ApiError, apiFetch, failure, type ApiFetch } from "./http";
import { readSse } from "./sse";
import type { TranscriptPage } from "../stream/stopped-runs";

/** The stream modes the UI asks for. */
export const STREAM_MODES = ["values", "messages-tuple", "updates", "custom"] as const satisfies readonly WireStreamMode[];

/** How often a dropped run stream is re-joined before the UI says the connection was lost. */
export const MAX_STREAM_RECONNECTS = 3;

/** Options of {@link ApiClient.streamRun}. */
export interface StreamRunOptions {
  /** The run request (its `assistant_id` is the method's argument). */
  body: Omit<WireRunCreate, "assistant_id">;
  signal?: AbortSignal;
  /** Called as soon as the gateway names the run (its `Content-Location`), before the first frame. */
  onRunCreated?: (run: { run_id: string; thread_id?: string }) => void;
}

/** Options of {@link ApiClient.joinStream}. */
export interface JoinStreamOptions {
  signal?: AbortSignal;
  /** Resume after this frame id; `-1` replays the run's retained buffer from its start. */
  lastEventId?: string;
  streamMode?: readonly WireStreamMode[];
}

/** `/api/threads/{t}/runs/{r}` (the gateway's `Content-Location`) → the ids. */
function runFromLocation(location: string | null): { run_id: string; thread_id?: string } | undefined {
  const m = location ? /(?:\/threads\/([^/]+))?\/runs\/([^/?]+)/.exec(location) : null;
  return m ? { run_id: decodeURIComponent(m[2]), ...(m[1] ? { thread_id: decodeURIComponent(m[1]) } : {}) } : undefined;
}

const seg = encodeURIComponent;

/** The client; `createApiClient()` makes the app's one. */
export class ApiClient {
  /**
   * @param base the API root (`…/api/langgraph`)
   * @param fetcher how requests go out (the app's {@link apiFetch}; tests pass their own)
   * @param reconnectDelayMs the wait before the n-th re-join is n times this
   */
  constructor(
    private readonly base: string,
    private readonly fetcher: ApiFetch = apiFetch,
    private readonly reconnectDelayMs = 300,
  ) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.fetcher(`${this.base}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw await failure(res);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** The thread endpoints the UI uses. */
  readonly threads = {
    search: (q: WireThreadSearch): Promise<WireThread[]> => this.request("POST", "/threads/search", q),
    get: (threadId: string): Promise<WireThread> => this.request("GET", `/threads/${seg(threadId)}`),
    create: (body: WireThreadCreate): Promise<WireThread> => this.request("POST", "/threads", body),
    delete: (threadId: string): Promise<unknown> => this.request("DELETE", `/threads/${seg(threadId)}`),
    getState: (threadId: string): Promise<WireThreadState> => this.request("GET", `/threads/${seg(threadId)}/state`),
    updateState: (threadId: string, update: WireStateUpdate): Promise<WireThreadState> => this.request("POST", `/threads/${seg(threadId)}/state`, update),
    /** The persisted transcript, newest `limit` rows, each with the run that wrote it. */
    messagesPage: (threadId: string, limit = 200): Promise<TranscriptPage> => this.request("GET", `/threads/${seg(threadId)}/messages/page?limit=${limit}`),
  };

  /** The run endpoints the UI uses. */
  readonly runs = {
    get: (threadId: string, runId: string): Promise<WireRun> => this.request("GET", `/threads/${seg(threadId)}/runs/${seg(runId)}`),
    list: (threadId: string): Promise<WireRun[]> => this.request("GET", `/threads/${seg(threadId)}/runs`),
    stream: (threadId: string, assistantId: string, options: StreamRunOptions): AsyncGenerator<WireStreamPart> => this.streamRun(threadId, assistantId, options),
    joinStream: (threadId: string, runId: string, options: JoinStreamOptions = {}): AsyncGenerator<WireStreamPart> => this.joinStream(threadId, runId, options),
  };

  private async openStream(path: string, init: RequestInit): Promise<Response> {
    const res = await this.fetcher(`${this.base}${path}`, { ...init, headers: { accept: "text/event-stream", ...(init.headers as Record<string, string>) } });
    if (!res.ok) throw await failure(res);
    const type = res.headers.get("content-type") ?? "";
    if (!res.body || !type.includes("text/event-stream")) throw new ApiError(res.status, `Expected an event stream from ${path}, got ${type || "no body"}`);
    return res;
  }

  private joinPath(threadId: string, runId: string, modes?: readonly WireStreamMode[]): string {
    const q = new URLSearchParams();
    for (const m of modes ?? []) q.append("stream_mode", m);
    const qs = q.toString();
    return `/threads/${seg(threadId)}/runs/${seg(runId)}/stream${qs ? `?${qs}` : ""}`;
  }

  /** `POST /threads/{id}/runs/stream`, re-joined with `Last-Event-ID` when the connection drops mid-run. */
  async *streamRun(threadId: string, assistantId: string, options: StreamRunOptions): AsyncGenerator<WireStreamPart> {
    const { signal } = options;
    const res = await this.openStream(`/threads/${seg(threadId)}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...options.body, assistant_id: assistantId }),
      signal,
    });
    const run = runFromLocation(res.headers.get("content-location"));
    if (run) options.onRunCreated?.(run);
    const modes = options.body.stream_mode === undefined ? undefined : [options.body.stream_mode].flat();
    yield* this.follow(res, signal, run && this.joinPath(threadId, run.run_id, modes));
  }

  /** `GET /threads/{id}/runs/{run_id}/stream` from `lastEventId`, re-joined the same way when it drops. */
  async *joinStream(threadId: string, runId: string, options: JoinStreamOptions): AsyncGenerator<WireStreamPart> {
    const path = this.joinPath(threadId, runId, options.streamMode);
    const res = await this.openStream(path, { headers: options.lastEventId ? { "Last-Event-ID": options.lastEventId } : {}, signal: options.signal });
    yield* this.follow(res, options.signal, path, options.lastEventId);
  }

  /**
   * Yield the frames of `res`; when its connection breaks before the run's `end` (or a closing `error` / `gap`) frame,
   * re-join at `rejoin` after the last frame id seen, so no frame is lost or repeated. Without a
   * run to re-join, or after {@link MAX_STREAM_RECONNECTS} failed tries, the error reaches the caller.
   */
  private async *follow(first: Response, signal: AbortSignal | undefined, rejoin: string | undefined, startId?: string): AsyncGenerator<WireStreamPart> {
    let res: Response | undefined = first;
    let lastId = startId;
    let failures = 0;
    for (;;) {
      try {
        if (!res) {
          res = await this.openStream(rejoin!, { headers: { "Last-Event-ID": lastId ?? "-1" }, signal });
        }
        let last = "";
        for await (const part of readSse(res.body!, signal)) {
          failures = 0;
          if (part.id) lastId = part.id;
          last = part.event;
          yield part;
          if (part.event === "end") return;
        }
        // The stream's own last words: after them a closed body is the end (a re-join would only say them again).
        if (signal?.aborted || last === "error" || last === "gap") return;
        // A body that ends cleanly without `end` otherwise is a cut connection too (a proxy timing out).
        throw new Error("The event stream ended before the run did");
      } catch (err) {
        if (signal?.aborted) return;
        if (!rejoin || err instanceof ApiError || ++failures > MAX_STREAM_RECONNECTS) throw err;
        res = undefined;
        // A moment before the next try: a restarting gateway is not asked three times in the same millisecond.
        await pause(this.reconnectDelayMs * failures, signal);
      }
    }
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** The client pointed at `${origin}/api/langgraph`. */
export function createApiClient(origin: string = location.origin): ApiClient {
  return new ApiClient(`${origin}/api/langgraph`);
}
