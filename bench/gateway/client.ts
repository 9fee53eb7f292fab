/**
 * Load generator of the gateway benchmark, run as its own process so the
 * server's CPU and RSS are measured alone. argv: base URL.
 *
 * Driven by one command per stdin line, answering each with one JSON line:
 * - `prepare N` — create N fresh threads (this also opens the keep-alive
 *   sockets) → `{"prepared":N}`
 * - `go` — start one streaming run on every prepared thread at once and read
 *   each SSE stream to the end → `{"wall_s","ttfe_ms":[…],"failures","bytes_per_run"}`
 * - `exit`
 *
 * Time to first event is taken when the first body bytes of a response reach
 * the socket (the socket's first `data` event after the request was written),
 * so it measures the server and not this process's own response parsing.
 * A run counts as failed unless it answers 200, ends with `event: end` and
 * carries no `event: error`.
 */
import http from "node:http";
import readline from "node:readline";

const base = new URL(process.argv[2]);
/** Sent with every request (`BENCH_CLIENT_HEADERS`, JSON): the session cookie and CSRF token, or a bearer token, when the bench runs with sign-in on. */
const extraHeaders = JSON.parse(process.env.BENCH_CLIENT_HEADERS ?? "{}") as Record<string, string>;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function request(method: string, path: string, body: string, onFirstByte?: () => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, agent, headers: { ...extraHeaders, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    if (onFirstByte) req.once("socket", (socket) => socket.once("data", () => onFirstByte()));
    req.end(body);
  });
}

const body = JSON.stringify({
  assistant_id: "lead_agent",
  input: { messages: [{ type: "human", content: [{ type: "text", text: "go" }], additional_kwargs: {} }] },
  stream_mode: ["values", "messages-tuple", "updates", "custom"],
  on_disconnect: "continue",
});

let prepared: string[] = [];

async function prepare(n: number): Promise<void> {
  prepared = await Promise.all(
    Array.from({ length: n }, async () => JSON.parse((await request("POST", "/api/langgraph/threads", "{}")).text).thread_id as string),
  );
}

async function go(): Promise<{ wall_s: number; ttfe_ms: number[]; failures: number; bytes_per_run: number }> {
  const threads = prepared;
  prepared = [];
  const ttfe: number[] = [];
  let failures = 0;
  let bytes = 0;
  const t0 = performance.now();
  await Promise.all(
    threads.map(async (tid) => {
      const start = performance.now();
      const res = await request("POST", `/api/langgraph/threads/${tid}/runs/stream`, body, () => ttfe.push(performance.now() - start));
      bytes += res.text.length;
      if (res.status !== 200 || !res.text.endsWith("event: end\ndata: null\n\n") || res.text.includes("event: error")) failures++;
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return { wall_s: wall, ttfe_ms: ttfe, failures, bytes_per_run: Math.round(bytes / Math.max(1, threads.length)) };
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === "prepare") {
    await prepare(Number(arg));
    process.stdout.write(`${JSON.stringify({ prepared: prepared.length })}\n`);
  } else if (cmd === "go") {
    process.stdout.write(`${JSON.stringify(await go())}\n`);
  } else if (cmd === "exit") {
    break;
  }
}
agent.destroy();
