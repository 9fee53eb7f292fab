import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { openArtifact, threadPaths } from "@deerflow-ts/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

/** Descriptors of this process that point at `file`. */
function openDescriptors(file: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed while listing
    }
  }
  return n;
}

/** Let pending stream closes run: bounded turns of the event loop, no timers. */
async function settle(file: string): Promise<number> {
  for (let i = 0; i < 200 && openDescriptors(file) > 0; i++) await new Promise((r) => setImmediate(r));
  return openDescriptors(file);
}

describe.skipIf(!fs.existsSync("/proc/self/fd"))("artifacts are served from one checked descriptor", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gw-artfd-"));
  const dataDir = path.join(root, "data");
  let gw: TestGateway;
  let file: string;

  beforeAll(async () => {
    gw = await startTestGateway({ dataDir, steps: ["ok"] });
    expect((await postJson(`${gw.url}/api/threads`, { thread_id: "t1" })).status).toBe(200);
    const outputs = threadPaths(dataDir, "default", "t1").outputs;
    fs.mkdirSync(outputs, { recursive: true });
    file = fs.realpathSync(outputs) + "/big.txt";
    fs.writeFileSync(file, "x".repeat(4 * 1024 * 1024));
  });
  afterAll(async () => {
    await gw.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("closes the descriptor after full reads, ranges, HEAD, an unsatisfiable range and a client that hangs up", async () => {
    const url = `${gw.url}/api/threads/t1/artifacts/mnt/user-data/outputs/big.txt`;
    expect((await (await fetch(url)).text()).length).toBe(4 * 1024 * 1024);
    expect(await (await fetch(url, { headers: { range: "bytes=0-9" } })).text()).toBe("xxxxxxxxxx");
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(4 * 1024 * 1024));
    expect((await fetch(url, { headers: { range: "bytes=999999999-" } })).status).toBe(416);
    // A client that reads the headers and goes away mid-body.
    await new Promise<void>((resolve, reject) => {
      const req = http.get(url, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (err) => ((err as NodeJS.ErrnoException).code === "ECONNRESET" ? resolve() : reject(err)));
    });
    expect(await settle(file)).toBe(0);
  });

  it("openArtifact refuses a planted FIFO without blocking and a final symlink out of the thread", async () => {
    const paths = threadPaths(dataDir, "default", "t1");
    const fifo = path.join(paths.outputs, "pipe.md");
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [fifo]);
    await expect(openArtifact(paths, "/mnt/user-data/outputs/pipe.md")).rejects.toMatchObject({ code: "artifact_not_file" });
    fs.symlinkSync("/etc/hostname", path.join(paths.outputs, "link.txt"));
    await expect(openArtifact(paths, "/mnt/user-data/outputs/link.txt")).rejects.toMatchObject({ name: "PathAccessError" });
    const opened = await openArtifact(paths, "/mnt/user-data/outputs/big.txt");
    try {
      expect(opened.size).toBe(4 * 1024 * 1024);
      expect(opened.mimeType).toBe("text/plain");
      expect(fs.readlinkSync(`/proc/self/fd/${opened.handle.fd}`)).toBe(file);
    } finally {
      await opened.handle.close();
    }
  });
});
