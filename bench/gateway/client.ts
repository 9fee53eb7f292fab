/**
 * Load generator of the gateway benchmark (a separate process, so the
 * server's CPU and RSS are measured alone). argv: base URL, number of runs.
 * Creates one thread per run (which also opens the keep-alive sockets), runs
 * a warm-up, prints `ready` and waits for `go` on stdin (so the parent can
 * measure only the timed phase), then starts every streaming run at once and
 * reads each SSE stream to the end.
 * Prints one JSON line: {wall_s, ttfe_ms: number[], failures}.
 *
 * Time to first event is taken when the first body bytes of a response reach
 * the socket (the socket's first `data` event after the request was written),
 * so it measures the server and not this process's own response parsing.
 */
import http from "node:http";

const base = new URL(process.argv[2]);
const runs = Number(process.argv[3]);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function request(method: string, path: string, body: string, onFirstByte?: () => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
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

const threads = await Promise.all(
  Array.from({ length: runs }, async () => JSON.parse((await request("POST", "/api/langgraph/threads", "{}")).text).thread_id as string),
);
const body = JSON.stringify({
  assistant_id: "lead_agent",
  input: { messages: [{ type: "human", content: [{ type: "text", text: "go" }], additional_kwargs: {} }] },
  stream_mode: ["values", "messages-tuple", "updates", "custom"],
  on_disconnect: "continue",
});
// Warm-up (JIT, lazily loaded code paths, socket pool) on separate threads, not measured.
const warm = Number(process.env.BENCH_WARMUP ?? 20);
const warmThreads = await Promise.all(
  Array.from({ length: warm }, async () => JSON.parse((await request("POST", "/api/langgraph/threads", "{}")).text).thread_id as string),
);
await Promise.all(warmThreads.map((tid) => request("POST", `/api/langgraph/threads/${tid}/runs/stream`, body)));

process.stdout.write("ready\n");
await new Promise<void>((resolve) => {
  process.stdin.setEncoding("utf8");
  let buf = "";
  const onData = (d: string) => {
    buf += d;
    if (buf.includes("go\n")) {
      process.stdin.off("data", onData);
      process.stdin.destroy();
      resolve();
    }
  };
  process.stdin.on("data", onData);
});

const ttfe: number[] = [];
let failures = 0;
const t0 = performance.now();
await Promise.all(
  threads.map(async (tid) => {
    const start = performance.now();
    const res = await request("POST", `/api/langgraph/threads/${tid}/runs/stream`, body, () => ttfe.push(performance.now() - start));
    if (res.status !== 200 || !res.text.endsWith("event: end\ndata: null\n\n") || res.text.includes("event: error")) failures++;
  }),
);
const wall = (performance.now() - t0) / 1000;
agent.destroy();
process.stdout.write(JSON.stringify({ wall_s: wall, ttfe_ms: ttfe, failures }) + "\n");
