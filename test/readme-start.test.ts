import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const dataDir = mkdtempSync(join(root, "test", ".start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** True while any process of the group `pgid` is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

// `npm start` runs at the repository root; a developer's own config.yaml there would (rightly) win over demo mode.
const hasRootConfig = existsSync(join(root, "config.yaml"));
if (hasRootConfig) console.warn("[readme-start] skipped: a config.yaml exists at the repository root");

describe.skipIf(hasRootConfig)("README main command (npm start)", () => {
  it("starts the gateway + UI in demo mode; a run walks through the scripted task (tool step + artifact)", async () => {
    const child = spawn("npm", ["start", "--", "--port", "0", "--data-dir", dataDir], { cwd: root, detached: true, env: { ...process.env, NO_COLOR: "1" } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    try {
      const url = await new Promise<string>((res, rej) => {
        const t = setTimeout(() => rej(new Error(`no URL printed:\n${out}`)), 90_000);
        const check = () => {
          const m = /DeerFlow is running at (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(t);
            res(m[1]);
          }
        };
        child.stdout.on("data", check);
        child.on("exit", (c) => rej(new Error(`npm start exited with ${c}:\n${out}`)));
      });
      expect(out).toContain("DEMO mode");
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: "healthy", service: "deer-flow-gateway" });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<div id=\"root\"");
      await fetch(`${url}/api/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ thread_id: "readme1" }) });
      const run = await fetch(`${url}/api/threads/readme1/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "lead_agent", input: { messages: [{ type: "human", content: "hello newcomer" }] } }),
      });
      const values = (await run.json()) as { messages: Array<{ type: string; content: string; name?: string; tool_calls?: Array<{ name: string }> }>; artifacts?: string[] };
      // The demo says it is scripted, writes a report with write_file (a tool step), presents it (an artifact), answers.
      const ais = values.messages.filter((m) => m.type === "ai");
      expect(ais[0].content).toContain("scripted DeerFlow demo");
      expect(ais[0].tool_calls?.map((c) => c.name)).toEqual(["write_file"]);
      expect(values.messages.filter((m) => m.type === "tool").map((m) => [m.name, m.content])).toEqual([
        ["write_file", "OK"],
        ["present_files", "Successfully presented files"],
      ]);
      expect(values.artifacts).toEqual(["/mnt/user-data/outputs/deerflow-demo.md"]);
      expect(ais.at(-1)?.content).toContain("npx deerflow init");
      const artifact = await fetch(`${url}/api/threads/readme1/artifacts/mnt/user-data/outputs/deerflow-demo.md`);
      expect(artifact.status).toBe(200);
      expect(await artifact.text()).toContain("> hello newcomer");
      expect(((await (await fetch(`${url}/api/features`)).json()) as { demo_mode: unknown }).demo_mode).toEqual({ enabled: true, configure_command: "npx deerflow init" });
    } finally {
      // Wait for the server to exit before the data dir is removed: on shutdown it still writes (the thread's
      // memory update, its stores), and removing the directory under those writes fails with ENOTEMPTY.
      const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((res) => child.once("exit", () => res()));
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* gone */
      }
      const killer = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* gone */
        }
      }, 20_000);
      await exited;
      // npm exits before the server it started: wait until no process of the group is left.
      for (let i = 0; i < 400 && groupAlive(child.pid!); i++) await new Promise((r) => setTimeout(r, 50));
      clearTimeout(killer);
    }
  }, 150_000);
});
