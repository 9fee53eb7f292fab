import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { call, FIXTURES, makePool, nodeServer, toolRuntime } from "./_helpers";

const CRASHING = path.join(FIXTURES, "crashing-server.mjs");
const HANGING = path.join(FIXTURES, "hanging-server.mjs");

describe("one failing MCP server never blocks the others or the run", () => {
  it("loads healthy servers while one fails to start, one crashes at start and one hangs; each is reported once", async () => {
    const h = makePool(
      {
        good: nodeServer(CRASHING),
        missing: { type: "stdio", command: path.join(FIXTURES, "no-such-binary"), args: [] },
        broken: nodeServer(CRASHING, ["--exit-at-start"]),
        hung: nodeServer(HANGING, [], { session_init_timeout: 1 }),
        weird: { type: "websocket", url: "ws://127.0.0.1:9" },
        nocmd: { type: "stdio" },
      },
      { retryInitialMs: 60_000 },
    );
    try {
      const t0 = Date.now();
      const tools = await h.pool.getTools();
      const elapsed = Date.now() - t0;
      // bounded by the hung server's own 1 s timeout instead of the 60 s default (slack for a loaded machine)
      expect(elapsed).toBeLessThan(8000);
      expect(tools.map((t) => t.name).sort()).toEqual(["good_crash", "good_echo"]);
      const st = Object.fromEntries(h.pool.status().map((s) => [s.name, s]));
      expect(st.good).toMatchObject({ state: "connected", connected: true });
      expect(st.missing).toMatchObject({ state: "failed", connected: false, tools: [], failures: 1 });
      expect(st.missing.last_error).toMatch(/failed to start/);
      expect(st.broken.last_error).toMatch(/failed to start.*refusing to start/s);
      expect(st.hung.last_error).toMatch(/did not initialise within 1s/);
      expect(st.hung.next_retry_at).not.toBeNull();
      // invalid entries are reported but not retried: only a config change can fix them
      expect(st.weird).toMatchObject({ state: "failed", last_error: "MCP server 'weird' has unsupported transport type: websocket", next_retry_at: null });
      expect(st.nocmd).toMatchObject({ state: "failed", last_error: "MCP server 'nocmd' with stdio transport requires 'command'", next_retry_at: null });
      // the run goes on: a second build neither waits nor reports again
      const t1 = Date.now();
      expect((await h.pool.getTools()).length).toBe(2);
      expect(Date.now() - t1).toBeLessThan(200);
      for (const name of ["missing", "broken", "hung"]) expect(h.warnings.filter((w) => w.includes(`'${name}'`)).length).toBe(1);
      const echo = await call(tools, "good_echo", { text: "still here" });
      expect(echo.content).toBe("echo: still here");
    } finally {
      await h.cleanup();
    }
  });

  it("a failed server is retried with backoff and its tools come back when it recovers", async () => {
    const h = makePool({ flaky: nodeServer(CRASHING, ["--require-file", "PLACEHOLDER"]) }, { retryInitialMs: 100, retryMaxMs: 400 });
    const flag = path.join(h.dir, "ready.flag");
    h.writeConfig({ flaky: nodeServer(CRASHING, ["--require-file", flag]), other: nodeServer(CRASHING) });
    try {
      expect((await h.pool.getTools()).map((t) => t.name).sort()).toEqual(["other_crash", "other_echo"]);
      const first = h.pool.status().find((s) => s.name === "flaky")!;
      // failed, or already retrying in the background (the retry is due after 100 ms)
      expect(first.failures).toBeGreaterThanOrEqual(1);
      expect(["failed", "connecting"]).toContain(first.state);
      expect(first.tools).toEqual([]);
      // wait for a second failed retry: the backoff doubles, the warning is not repeated
      await waitFor(() => (h.pool.status().find((s) => s.name === "flaky")?.failures ?? 0) >= 2, 5000);
      expect(h.warnings.filter((w) => w.includes("'flaky'")).length).toBe(1);
      fs.writeFileSync(flag, "ok");
      await waitFor(() => h.pool.status().find((s) => s.name === "flaky")?.state === "connected", 5000);
      const tools = await h.pool.getTools();
      expect(tools.map((t) => t.name)).toContain("flaky_echo");
      expect(h.infos.some((m) => m.includes("'flaky' recovered"))).toBe(true);
      expect((await call(tools, "flaky_echo", { text: "ok" })).content).toBe("echo: ok");
    } finally {
      await h.cleanup();
    }
  });

  it("a crash mid-call, a call past tool_call_timeout and a cancelled call each end as an error tool message; sessions recover", async () => {
    const h = makePool({ good: nodeServer(CRASHING), slow: nodeServer(HANGING, ["--hang-tool"], { tool_call_timeout: 0.5 }) });
    try {
      const tools = await h.pool.getTools();
      const crashed = await call(tools, "good_crash", {});
      expect(crashed.status).toBe("error");
      expect(crashed.content).toMatch(/^Error: MCP server 'good' closed the connection during 'crash'/);
      expect(await call(tools, "good_echo", { text: "back" })).toMatchObject({ status: "success", content: "echo: back" });
      expect(h.pool.status().find((s) => s.name === "good")).toMatchObject({ state: "connected" });

      expect((await call(tools, "slow_ping", {})).content).toBe("pong"); // session started, so only the call is timed
      const t0 = Date.now();
      const timedOut = await call(tools, "slow_sleep", {});
      expect(Date.now() - t0).toBeLessThan(2500);
      expect(timedOut).toMatchObject({ status: "error" });
      expect(timedOut.content).toMatch(/timed out after 0.5s/);
      expect((await call(tools, "slow_ping", {})).content).toBe("pong");

      // a cancelled run: its signal reaches the SDK request (aborted up front so the 0.5 s timeout cannot win the race)
      const ac = new AbortController();
      ac.abort(new Error("run cancelled"));
      const cancelled = await call(tools, "slow_sleep", {}, toolRuntime("t1", "u1", ac.signal));
      expect(cancelled.status).toBe("error");
      expect(cancelled.content).toMatch(/run cancelled/);
    } finally {
      await h.cleanup();
    }
  });

  it("picks up a changed extensions_config.json without a restart", async () => {
    const h = makePool({ a: nodeServer(CRASHING) });
    try {
      expect((await h.pool.getTools()).map((t) => t.name).sort()).toEqual(["a_crash", "a_echo"]);
      h.writeConfig({ b: nodeServer(CRASHING), a: { ...nodeServer(CRASHING), enabled: false } });
      expect((await h.pool.getTools()).map((t) => t.name).sort()).toEqual(["b_crash", "b_echo"]);
      expect(h.infos.some((m) => m.includes("extensions config changed"))).toBe(true);
      // a broken edit keeps the previous servers and is reported
      fs.writeFileSync(h.configPath, "{ not json");
      expect((await h.pool.getTools()).map((t) => t.name).sort()).toEqual(["b_crash", "b_echo"]);
      expect(h.pool.lastConfigError()).toMatch(/extensions_config\.json/);
    } finally {
      await h.cleanup();
    }
  });
});

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
