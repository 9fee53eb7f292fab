import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
// Inside the repository so `npx deerflow` resolves the workspace binary, as it does for a reader.
const work = mkdtempSync(join(root, "test", ".quickstart-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function quickstartBlock(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const m = /<!-- quickstart:begin -->\s*```sh\n([\s\S]*?)```\s*<!-- quickstart:end -->/.exec(readme);
  if (!m) throw new Error("README.md has no quickstart block");
  return m[1];
}

describe("README quick start", () => {
  it("runs verbatim and the run produces the report artifact", async () => {
    const block = quickstartBlock();
    expect(block).toContain("npx deerflow run");
    // Fail on the first failing command; background jobs (the scripted server) are stopped with the process group.
    const script = `set -e\n${block}`;
    writeFileSync(join(work, "quickstart.sh"), script);
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env.DEER_FLOW_CONFIG_PATH;
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
      const child = spawn("bash", ["quickstart.sh"], { cwd: work, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("exit", (c) => {
        try {
          process.kill(-child.pid!, "SIGTERM"); // the backgrounded scripted server and its npx wrapper
        } catch {
          /* already gone */
        }
        setTimeout(() => res({ code: c, stdout, stderr }), 200);
      });
    });
    expect({ code, tail: stderr.slice(-2000) }).toMatchObject({ code: 0 });
    expect(stdout).toContain("No problems found");
    expect(stdout).toContain("→ write_file(");
    expect(stdout).toMatch(/Artifacts:\n {2}\/mnt\/user-data\/outputs\/deerflow-demo\.md {2}(\S+deerflow-demo\.md)/);
    const host = /Artifacts:\n {2}\S+ {2}(\S+)/.exec(stdout)![1];
    expect(readFileSync(host, "utf8")).toContain("> write a report to outputs");
    // the config lands in a directory of its own: none is left where `npm start` would pick it up instead of the demo
    expect(existsSync(join(work, "config.yaml"))).toBe(false);
    expect(readFileSync(join(work, "try-cli", "config.yaml"), "utf8")).toContain("http://127.0.0.1:8787/v1");
    expect(readFileSync(join(work, "try-cli", ".env"), "utf8").length).toBeGreaterThan(0);
  }, 120_000);
});
