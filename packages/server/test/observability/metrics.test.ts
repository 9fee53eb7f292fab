/**
 * `/metrics`: off by default; with metrics on, the Prometheus text (parsed here)
 * after a scripted run with a tool call carries the run, token, tool-call,
 * request and process families; with sign-in on it needs an admin token.
 */
import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comment lines skipped). */
function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe("/metrics", () => {
  it("is not served unless metrics are enabled", async () => {
    gw = await startTestGateway();
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
  });

  it("exposes runs, tokens by caller, tool calls, requests and process figures after a scripted run", async () => {
    gw = await startTestGateway({
      metrics: true,
      steps: [{ toolCalls: [{ name: "echo", args: { text: "x" } }], usage: { input_tokens: 10, output_tokens: 5 } }, { text: "done", usage: { input_tokens: 20, output_tokens: 7 } }],
    });
    await postJson(`${gw.url}/api/threads`, { thread_id: "t-metrics" });
    expect((await postJson(`${gw.url}/api/threads/t-metrics/runs/wait`, { input: humanInput("hi") })).status).toBe(200);
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const samples = parsePrometheus(await res.text());
    expect(find(samples, "deerflow_runs_total", { status: "success" })[0]?.value).toBe(1);
    expect(find(samples, "deerflow_run_duration_seconds_count", { status: "success" })[0]?.value).toBe(1);
    expect(find(samples, "deerflow_model_tokens_total", { caller: "lead", kind: "input" })[0]?.value).toBe(30);
    expect(find(samples, "deerflow_model_tokens_total", { caller: "lead", kind: "output" })[0]?.value).toBe(12);
    expect(find(samples, "deerflow_model_calls_total", { caller: "lead" })[0]?.value).toBe(2);
    expect(find(samples, "deerflow_tool_calls_total", { tool: "echo", outcome: "success" })[0]?.value).toBe(1);
    expect(find(samples, "deerflow_active_runs")[0]?.value).toBe(0);
    expect(find(samples, "deerflow_http_requests_total", { method: "POST", route: "/api/threads/:thread_id/runs/wait", status: "200" })[0]?.value).toBe(1);
    expect(find(samples, "deerflow_memory_queue_depth")).toHaveLength(1);
    expect(find(samples, "deerflow_nodejs_eventloop_lag_seconds")).toHaveLength(1);
    expect(find(samples, "deerflow_process_resident_memory_bytes")[0]?.value).toBeGreaterThan(0);
  });

  it("needs a personal access token with the admin scope while sign-in is on", async () => {
    const { startAuthGateway, initializeAdmin } = await import("../helpers/auth-session");
    const ag = await startAuthGateway({ metrics: true });
    gw = ag;
    expect((await fetch(`${ag.url}/metrics`)).status).toBe(401);
    await initializeAdmin(ag.api);
    const admin = ag.users.getByEmail("admin@example.com")!;
    const reader = await ag.users.tokens.create(admin.id, "reader", ["read"]);
    const scraper = await ag.users.tokens.create(admin.id, "scraper", ["admin"]);
    expect((await fetch(`${ag.url}/metrics`, { headers: { authorization: `Bearer ${reader.secret}` } })).status).toBe(403);
    const ok = await fetch(`${ag.url}/metrics`, { headers: { authorization: `Bearer ${scraper.secret}` } });
    expect(ok.status).toBe(200);
    expect(parsePrometheus(await ok.text()).some((s) => s.name === "deerflow_http_requests_total")).toBe(true);
  });
});
