import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, until } from "./helpers/test-gateway";

const here = path.dirname(fileURLToPath(import.meta.url));
const script = path.join(here, "helpers", "crash-server.ts");
const children: ChildProcess[] = [];

function launch(dataDir: string): Promise<{ child: ChildProcess; url: string; recovered: string[] }> {
  // run node itself with the tsx loader (not `npx tsx`, whose wrapper would survive a SIGKILL of the
  // wrapper and keep the real server alive): the SIGKILL must hit the process that serves the run
  const child = spawn(process.execPath, ["--conditions=deerflow-source", "--import", "tsx", script, dataDir], { cwd: path.resolve(here, "../../.."), stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, ...(JSON.parse(line) as { url: string; recovered: string[] }) });
    });
    child.stderr!.on("data", (d) => (err += d));
    child.on("exit", (code) => reject(new Error(`server exited early (${code}): ${err}`)));
  });
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

describe("crash recovery", () => {
  it("after SIGKILL mid-run, committed checkpoints survive and the run is not left running", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-crash-"));
    try {
      const first = await launch(dataDir);
      const api = `${first.url}/api`;
      await postJson(`${api}/threads`, { thread_id: "crash-thread", metadata: { keep: true } });
      const done = (await (await postJson(`${api}/threads/crash-thread/runs/wait`, { input: humanInput("one") })).json()) as { messages: unknown[] };
      expect(done.messages).toHaveLength(2);
      const run = (await (await postJson(`${api}/threads/crash-thread/runs`, { input: humanInput("two") })).json()) as { run_id: string };
      await until(async () => {
        const s = (await (await fetch(`${api}/threads/crash-thread/state`)).json()) as { values: { messages: unknown[] } };
        return s.values.messages.length >= 5; // human, ai, human, ai(tool call), tool
      }, 15_000);
      const mid = (await (await fetch(`${api}/threads/crash-thread/runs/${run.run_id}`)).json()) as { status: string };
      expect(mid.status).toBe("running");
      const histBefore = (await (await postJson(`${api}/threads/crash-thread/history`, { limit: 100 })).json()) as Array<{ checkpoint_id: string }>;
      first.child.kill("SIGKILL");
      await new Promise((r) => first.child.once("exit", r));
      await expect(fetch(`${api}/threads/crash-thread`)).rejects.toThrow(); // the server is really gone

      const second = await launch(dataDir);
      expect(second.recovered).toContain(run.run_id);
      const api2 = `${second.url}/api`;
      const rec = (await (await fetch(`${api2}/threads/crash-thread/runs/${run.run_id}`)).json()) as { status: string; stop_reason: string };
      expect(rec.status).toBe("error");
      expect(rec.stop_reason).toBe("orphan_recovered");
      const runs = (await (await fetch(`${api2}/threads/crash-thread/runs`)).json()) as Array<{ status: string }>;
      expect(runs.map((r) => r.status).sort()).toEqual(["error", "success"]);
      const state = (await (await fetch(`${api2}/threads/crash-thread/state`)).json()) as { values: { messages: Array<{ type: string; content: unknown }> } };
      expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai", "tool"]);
      expect(state.values.messages[4].content).toBe("echo: persisted");
      const histAfter = (await (await postJson(`${api2}/threads/crash-thread/history`, { limit: 100 })).json()) as Array<{ checkpoint_id: string }>;
      expect(histAfter.map((h) => h.checkpoint_id)).toEqual(histBefore.map((h) => h.checkpoint_id));
      const thread = (await (await fetch(`${api2}/threads/crash-thread`)).json()) as { status: string; metadata: Record<string, unknown> };
      expect(thread.metadata).toEqual({ keep: true });
      expect(thread.status).not.toBe("running");
      // the thread accepts a new run after recovery (no stale active-run lock)
      const stream = await postJson(`${api2}/threads/crash-thread/runs/stream`, { input: humanInput("three") });
      expect(stream.status).toBe(200);
      second.child.kill("SIGKILL");
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
