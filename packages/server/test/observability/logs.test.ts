/**
 * The gateway's structured logs: JSON lines (parsed here) with an access line
 * per request, X-Request-Id accepted or generated, the run lifecycle with its
 * tokens, and no secret in any line.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openLogger, REDACTED } from "../../src/observability";
import type { Logger } from "../../src/observability";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** A logger writing JSON lines into an array. */
async function collectingLogger(level: "debug" | "info" = "info"): Promise<{ logger: Logger; lines: string[]; records: () => Array<Record<string, unknown>> }> {
  const lines: string[] = [];
  const logger = await openLogger({ level, format: "json", destination: { write: (s) => lines.push(s) } });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("gateway logs", () => {
  it("writes one JSON access line per request with the route pattern, and returns X-Request-Id", async () => {
    const { logger, lines, records } = await collectingLogger();
    gw = await startTestGateway({ logger });
    const given = await fetch(`${gw.url}/api/threads/abc-123/state`, { headers: { "X-Request-Id": "req-from-proxy.1" } });
    expect(given.headers.get("x-request-id")).toBe("req-from-proxy.1");
    const generated = await fetch(`${gw.url}/health`, { headers: { "X-Request-Id": "bad id with spaces \"quoted\"" } });
    const genId = generated.headers.get("x-request-id")!;
    expect(genId).toMatch(/^[0-9a-f-]{36}$/);
    const malformed = await postJson(`${gw.url}/api/threads/search`, { limit: "many" });
    expect(malformed.status).toBe(422);
    await fetch(`${gw.url}/no/such/route`);

    for (const l of lines) expect(l.endsWith("\n")).toBe(true);
    const access = records().filter((r) => r.msg === "request");
    expect(access).toHaveLength(4);
    expect(access[0]).toMatchObject({ level: "info", component: "access", method: "GET", route: "/api/threads/:thread_id/state", request_id: "req-from-proxy.1" });
    expect(access[0].status).toBe(given.status);
    expect(access[1]).toMatchObject({ route: "/health", status: 200, request_id: genId });
    expect(access[2]).toMatchObject({ method: "POST", route: "/api/threads/search", status: 422 });
    expect(access[3]).toMatchObject({ route: "(unmatched)", status: 404 });
    for (const a of access) {
      expect(typeof a.duration_ms).toBe("number");
      expect(typeof a.time).toBe("string");
      expect(a.user_id).toBeUndefined(); // sign-in off
    }
  });

  it("logs a run's start and end with run id, thread id, tokens and duration, and a failed run as an error", async () => {
    const { logger, records } = await collectingLogger();
    gw = await startTestGateway({
      logger,
      steps: [{ toolCalls: [{ name: "echo", args: { text: "x" } }], usage: { input_tokens: 10, output_tokens: 5 } }, { text: "done", usage: { input_tokens: 20, output_tokens: 7 } }, { error: { kind: "server", message: "provider down" } }],
    });
    await postJson(`${gw.url}/api/threads`, { thread_id: "t-log" });
    const ok = await postJson(`${gw.url}/api/threads/t-log/runs/wait`, { input: humanInput("hi") });
    expect(ok.status).toBe(200);
    const bad = await postJson(`${gw.url}/api/threads/t-log/runs/wait`, { input: humanInput("again") });
    expect(bad.status).toBeLessThan(500);
    await gw.close();
    gw = undefined;
    const runLines = records().filter((r) => r.component === "run");
    const started = runLines.filter((r) => r.msg === "run started");
    expect(started).toHaveLength(2);
    expect(started[0]).toMatchObject({ level: "info", thread_id: "t-log" });
    const finished = runLines.find((r) => r.msg === "run finished")!;
    expect(finished).toMatchObject({ level: "info", status: "success", thread_id: "t-log", run_id: started[0].run_id, input_tokens: 30, output_tokens: 12, total_tokens: 42, llm_calls: 2 });
    expect(finished.by_caller).toMatchObject({ lead_agent: 42 });
    expect(typeof finished.duration_ms).toBe("number");
    const failed = runLines.find((r) => r.msg === "run failed")!;
    expect(failed).toMatchObject({ level: "error", status: "error", run_id: started[1].run_id });
    expect(String(failed.error)).toContain("provider down");
  });

  it("names the user on access lines when sign-in is on, and logs the refused request", async () => {
    const { startAuthGateway, initializeAdmin } = await import("../helpers/auth-session");
    const { logger, records } = await collectingLogger();
    const ag = await startAuthGateway({ logger });
    gw = ag;
    await fetch(`${ag.api}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const admin = await initializeAdmin(ag.api);
    await admin.json("POST", "/threads/search", {});
    const lines = records().filter((r) => r.route === "/api/threads/search");
    // refused by the sign-in check (no session, no CSRF token) before the route ran: still one line, same route
    expect(lines.map((l) => l.status)).toEqual([403, 200]);
    expect(lines[0].user_id).toBeUndefined();
    expect(typeof lines[1].user_id).toBe("string");
    expect(String(lines[1].user_id).length).toBeGreaterThan(0);
  });
});

describe("redaction", () => {
  it("never writes an API key, a bearer token, a cookie or a password, by key or by value", async () => {
    const { logger, lines } = await collectingLogger("debug");
    const apiKey = "sk-proj-abcdefghijklmnopqrstuvwx123456";
    const bearer = "Bearer dfp_0123456789abcdefghijklmnop";
    const cookie = "deerflow_session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXZhbHVl";
    logger.info({ headers: { authorization: bearer, cookie, "x-api-key": "plain-but-keyed" }, model: { api_key: "short1", name: "gpt" } }, `calling with ${apiKey}`);
    logger.warn({ url: "https://x.test/cb?code=1&access_token=abcdefgh12345678" }, `login failed for password=hunter2hunter2 with ${bearer}`);
    logger.error({ err: new Error(`provider refused key ${apiKey}`) }, "model call failed");
    logger.info({ usage: { input_tokens: 12, total_tokens: 20 } }, "tokens are counts, not secrets");
    const out = lines.join("");
    for (const secret of [apiKey, "dfp_0123456789abcdefghijklmnop", "eyJhbGciOiJIUzI1NiJ9", "plain-but-keyed", "short1", "hunter2hunter2", "abcdefgh12345678"]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain(REDACTED);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed[0].model).toMatchObject({ name: "gpt" });
    expect(parsed[3].usage).toEqual({ input_tokens: 12, total_tokens: 20 });
  });

  it("writes readable text lines in the text format", async () => {
    const lines: string[] = [];
    const logger = await openLogger({ level: "info", format: "text", destination: { write: (s) => lines.push(s) }, color: false });
    logger.info({ component: "run", run_id: "r1" }, "run started");
    logger.debug("hidden at info");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ INFO  \[run\] run started run_id=r1\n$/);
  });
});
