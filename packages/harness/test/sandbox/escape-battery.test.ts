/**
 * The escape battery of reference/sandbox-isolation.md. Every probe runs once
 * UNSANDBOXED (plain `sh -c` on the host) as a control that must leak — this
 * proves the probe can detect a leak — and then under bwrap, where it must be
 * blocked.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReadFileTool } from "../../src/builtins/sandbox-tools";
import { BwrapSandboxProvider, parseSandboxConfig, threadDirs } from "../../src/sandbox";
import type { BwrapSandbox } from "../../src/sandbox";
import { bwrapAvailable, fakeToolRuntime, killAll, pidsMatching, sleep, tempBase } from "./helpers";

const HAS_BWRAP = bwrapAvailable();

interface Probe {
  name: string;
  command: () => string;
  leaked: (r: { stdout: string; stderr: string; exitCode: number }) => boolean | Promise<boolean>;
  reset?: () => void;
}

describe.skipIf(!HAS_BWRAP)("bwrap escape battery (control must leak, bwrap must block)", () => {
  const base = tempBase();
  let provider: BwrapSandboxProvider;
  let sandbox: BwrapSandbox;
  let wsA: string;
  let wsB: string;
  let server: net.Server;
  let port = 0;
  let connections = 0;
  let victim: ReturnType<typeof spawn>;
  const SECRET = "fake-secret-value-123456";

  beforeAll(async () => {
    provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base.dir });
    const idA = await provider.acquire("thread-a");
    await provider.acquire("thread-b");
    sandbox = provider.get(idA) as BwrapSandbox;
    wsA = threadDirs(base.dir, "thread-a").workspace;
    wsB = threadDirs(base.dir, "thread-b").workspace;
    writeFileSync(path.join(wsB, "secret.txt"), "THREAD-B-SECRET");
    writeFileSync(path.join(base.dir, "outside.txt"), "OUTSIDE-FILE");
    server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as net.AddressInfo).port;
    victim = spawn("sleep", ["3131"], { stdio: "ignore" });
    process.env.DEERFLOW_ESCAPE_TEST_SECRET = SECRET;
  });

  afterAll(async () => {
    delete process.env.DEERFLOW_ESCAPE_TEST_SECRET;
    victim.kill("SIGKILL");
    server.close();
    await provider.shutdown();
    base.cleanup();
  });

  const probes: Probe[] = [
    { name: "read /etc/shadow", command: () => "cat /etc/shadow", leaked: (r) => r.exitCode === 0 && r.stdout.includes("root:") },
    { name: "read another thread's workspace", command: () => `cat ${wsB}/secret.txt`, leaked: (r) => r.stdout.includes("THREAD-B-SECRET") },
    { name: "read a file outside the workspace", command: () => `cat ${base.dir}/outside.txt`, leaked: (r) => r.stdout.includes("OUTSIDE-FILE") },
    {
      name: "write outside the workspace",
      command: () => `echo pwned > ${base.dir}/pwned.txt; echo pwned > ${wsB}/pwned.txt`,
      leaked: () => existsSync(path.join(base.dir, "pwned.txt")) || existsSync(path.join(wsB, "pwned.txt")),
      reset: () => {
        rmSync(path.join(base.dir, "pwned.txt"), { force: true });
        rmSync(path.join(wsB, "pwned.txt"), { force: true });
      },
    },
    {
      name: "TCP to a 127.0.0.1 listener",
      command: () => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>&1; sleep 0.2`,
      leaked: async () => {
        await sleep(100);
        const hit = connections > 0;
        connections = 0;
        return hit;
      },
    },
    {
      name: "see and signal a host process",
      command: () => `kill -0 ${victim.pid} && echo VISIBLE; ls /proc | grep -x ${victim.pid}`,
      leaked: (r) => r.stdout.includes("VISIBLE") || r.stdout.split("\n").includes(String(victim.pid)),
    },
    { name: "inherit env secrets", command: () => 'echo "secret=$DEERFLOW_ESCAPE_TEST_SECRET"', leaked: (r) => r.stdout.includes(SECRET) },
    {
      name: "symlink planted in the workspace (followed by a command)",
      command: () => `ln -sf ${wsB}/secret.txt planted && cat planted`,
      leaked: (r) => r.stdout.includes("THREAD-B-SECRET"),
      reset: () => rmSync(path.join(wsA, "planted"), { force: true }),
    },
  ];

  for (const probe of probes) {
    it(`control leaks: ${probe.name}`, async () => {
      probe.reset?.();
      const r = spawnSync("sh", ["-c", probe.command()], { cwd: wsA, encoding: "utf8", env: process.env, timeout: 10_000 });
      const leaked = await probe.leaked({ stdout: r.stdout, stderr: r.stderr, exitCode: r.status ?? -1 });
      probe.reset?.();
      expect(leaked).toBe(true);
    });
    it(`bwrap blocks: ${probe.name}`, async () => {
      probe.reset?.();
      const r = await sandbox.executeCommand(probe.command(), { timeoutMs: 10_000 });
      const leaked = await probe.leaked(r);
      probe.reset?.();
      expect(leaked).toBe(false);
    });
  }

  it("the workspace itself is writable inside bwrap (positive control)", async () => {
    const r = await sandbox.executeCommand("echo ok > mine.txt && cat mine.txt");
    expect(r.stdout.trim()).toBe("ok");
    expect(readFileSync(path.join(wsA, "mine.txt"), "utf8").trim()).toBe("ok");
  });

  it("nested user namespaces are refused and capabilities are dropped", async () => {
    const r = await sandbox.executeCommand("unshare -U true; echo rc=$?; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status");
    expect(r.stdout).toMatch(/rc=[1-9]/);
    expect(r.stdout).toMatch(/CapEff:\s+0+\n/);
  });

  describe("symlink planted in the workspace, followed by the file tools", () => {
    it("control: a naive host read follows the link out", () => {
      symlinkSync("/etc/passwd", path.join(wsA, "sneaky"));
      expect(readFileSync(path.join(wsA, "sneaky"), "utf8")).toContain("root:");
    });
    it("file tools refuse a link planted from inside bwrap", async () => {
      rmSync(path.join(wsA, "sneaky"), { force: true });
      const planted = await sandbox.executeCommand(`ln -s /etc/passwd sneaky2 && ln -s ${wsB} otherws && echo done`);
      expect(planted.stdout).toContain("done");
      const tool = createReadFileTool({ provider });
      const rt = fakeToolRuntime("thread-a");
      const r1 = (await tool.execute({ description: "d", path: "/mnt/user-data/workspace/sneaky2" }, rt)) as { content: string };
      expect(r1.content).toMatch(/^Error: Access denied/);
      const r2 = (await tool.execute({ description: "d", path: "/mnt/user-data/workspace/otherws/secret.txt" }, rt)) as { content: string };
      expect(r2.content).toMatch(/^Error: Access denied/);
      expect(JSON.stringify([r1, r2])).not.toContain(base.dir);
      await expect(sandbox.writeFile("/mnt/user-data/workspace/otherws/x.txt", "x")).rejects.toThrow(/Access denied/);
      expect(existsSync(path.join(wsB, "x.txt"))).toBe(false);
    });
  });

  describe("'..' traversal in tool paths", () => {
    it("control: joining the raw path escapes", () => {
      const escaped = path.join(wsA, "..", "..", "..", "..", "..", "..", "outside.txt");
      expect(escaped.startsWith(wsA)).toBe(false);
      expect(readFileSync(escaped, "utf8")).toBe("OUTSIDE-FILE");
    });
    it("the file tools reject it", async () => {
      const tool = createReadFileTool({ provider });
      const r = (await tool.execute(
        { description: "d", path: "/mnt/user-data/workspace/../../../../../../outside.txt" },
        fakeToolRuntime("thread-a"),
      )) as { content: string };
      expect(r.content).toBe("Error: Access denied: path traversal detected");
    });
  });

  /** The pids `list()` returns once they are all gone, or what is left after a generous bound (a loaded machine only waits longer). */
  async function survivorsAfterExit(list: () => number[]): Promise<number[]> {
    for (let i = 0; i < 400 && list().length; i++) await sleep(25);
    return list();
  }

  describe("timeout kills the whole tree", () => {
    const tree = (tag: string) =>
      `sleep ${tag} & (setsid sh -c 'sleep ${tag} & sleep ${tag}' &); nohup sleep ${tag} >/dev/null 2>&1 & sh -c 'trap "" TERM HUP INT; sleep ${tag}' & wait`;

    it("control: killing the plain child leaves survivors", async () => {
      const tag = "7771";
      const child = spawn("sh", ["-c", tree(tag)], { stdio: "ignore" });
      // the whole tree (five sleepers) is up before its root is killed
      for (let i = 0; i < 400 && pidsMatching(`sleep ${tag}`).length < 5; i++) await sleep(25);
      child.kill("SIGKILL");
      await sleep(500);
      const survivors = pidsMatching(`sleep ${tag}`);
      killAll(survivors);
      expect(survivors.length).toBeGreaterThan(0);
    });

    it("bwrap: nothing survives a timeout", async () => {
      const tag = "7772";
      const started = Date.now();
      const r = await sandbox.executeCommand(tree(tag), { timeoutMs: 1000 });
      expect(r.timedOut).toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
      const survivors = await survivorsAfterExit(() => pidsMatching(`sleep ${tag}`));
      killAll(survivors);
      expect(survivors).toEqual([]);
    });
  });

  describe("parent death kills the tree", () => {
    const parentScript = (argv: string[]) =>
      `const cp=require("child_process");const a=${JSON.stringify(argv)};cp.spawn(a[0],a.slice(1),{stdio:"ignore"});setInterval(()=>{},1000);`;

    /** Only real sleepers (the node parent's own command line also contains the marker). */
    const sleeperPids = (marker: string) =>
      pidsMatching(marker).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim() === marker;
        } catch {
          return false;
        }
      });

    async function waitFor(marker: string): Promise<number[]> {
      for (let i = 0; i < 40; i++) {
        const pids = sleeperPids(marker);
        if (pids.length) return pids;
        await sleep(100);
      }
      return [];
    }

    it("control: a plain child outlives its killed parent", async () => {
      const tag = "7773";
      const parent = spawn(process.execPath, ["-e", parentScript(["sh", "-c", `sleep ${tag} & sleep ${tag}; wait`])], { stdio: "ignore" });
      expect((await waitFor(`sleep ${tag}`)).length).toBeGreaterThan(0);
      parent.kill("SIGKILL");
      await sleep(500);
      const survivors = sleeperPids(`sleep ${tag}`);
      killAll(survivors);
      expect(survivors.length).toBeGreaterThan(0);
    });

    it("bwrap: SIGKILL of the parent leaves no survivors", async () => {
      const tag = "7774";
      const argv = sandbox.commandArgv(`sleep ${tag} & (setsid sleep ${tag} &); sleep ${tag}; wait`);
      const parent = spawn(process.execPath, ["-e", parentScript(argv)], { stdio: "ignore" });
      expect((await waitFor(`sleep ${tag}`)).length).toBeGreaterThan(0);
      parent.kill("SIGKILL");
      const survivors = await survivorsAfterExit(() => sleeperPids(`sleep ${tag}`));
      killAll(survivors);
      expect(survivors).toEqual([]);
    });
  });

  describe("resource limits and output caps", () => {
    it("prlimit caps file size", async () => {
      const p2 = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { file_size_bytes: 1024 * 1024 } }), { baseDir: base.dir });
      const sb = p2.get(await p2.acquire("thread-limits")) as BwrapSandbox;
      const r = await sb.executeCommand("head -c 3000000 /dev/zero > big.bin; echo rc=$?");
      const size = Number(readFileSync(path.join(threadDirs(base.dir, "thread-limits").workspace, "big.bin")).length);
      expect(size).toBeLessThanOrEqual(1024 * 1024);
      expect(r.stdout).toMatch(/rc=[1-9]/);
      await p2.shutdown();
    });

    it("output beyond the cap is dropped and flagged", async () => {
      const p3 = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", max_output_bytes: 4096 }), { baseDir: base.dir });
      const sb = p3.get(await p3.acquire("thread-cap")) as BwrapSandbox;
      const r = await sb.executeCommand("head -c 2000000 /dev/zero | tr '\\0' 'a'; echo; echo END");
      expect(r.truncated).toBe(true);
      expect(r.stdout.length).toBeLessThan(6000);
      expect(r.stdout.trimEnd().endsWith("END")).toBe(true);
      await p3.shutdown();
    });
  });
});

it("bwrap availability is reported", () => {
  if (!HAS_BWRAP) console.warn("[sandbox tests] bubblewrap missing: escape battery skipped (apt-get install bubblewrap)");
  expect(typeof HAS_BWRAP).toBe("boolean");
});

