/**
 * Per-sandbox limits with real bubblewrap (and real cgroups where this
 * machine has writable ones): each attack runs for real, bounded.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, watch } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BwrapSandboxProvider, detectCgroups, parseSandboxConfig, threadDirs } from "../../../src/sandbox";
import type { BwrapSandbox } from "../../../src/sandbox";
import { createWriteFileTool } from "../../../src/builtins/sandbox-tools";
import { SandboxError } from "../../../src/errors";
import { bwrapAvailable, fakeToolRuntime, tempBase } from "../helpers";

const HAS_BWRAP = bwrapAvailable();
const CG = HAS_BWRAP ? detectCgroups() : undefined;
const HAS_CGROUPS = Boolean(CG?.parents.pids && CG?.parents.memory);
if (HAS_BWRAP && !HAS_CGROUPS) console.warn(`[limits tests] SKIPPING cgroup tests: no writable pids+memory cgroups (${CG?.notes.join("; ")})`);

/** Resolves once `file` exists (inotify on its directory; no polling). */
function whenExists(file: string): Promise<void> {
  return new Promise((resolve) => {
    const w = watch(path.dirname(file), () => {
      if (existsSync(file)) {
        w.close();
        resolve();
      }
    });
    if (existsSync(file)) {
      w.close();
      resolve();
    }
  });
}

describe.skipIf(!HAS_BWRAP)("sandbox limits (real bubblewrap)", () => {
  const base = tempBase("dflim-");
  let provider: BwrapSandboxProvider;
  const sandboxOf = async (p: BwrapSandboxProvider, thread: string) => p.get(await p.acquire(thread)) as BwrapSandbox;

  beforeAll(() => {
    provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base.dir });
  });
  afterAll(async () => {
    await provider.shutdown();
    base.cleanup();
  });

  describe.skipIf(!HAS_CGROUPS)("per-sandbox cgroups", () => {
    it("a fork flood in thread A hits A's 256-process limit while thread B's bash still runs", async () => {
      const a = await sandboxOf(provider, "flood-a");
      const b = await sandboxOf(provider, "flood-b");
      const marker = path.join(threadDirs(base.dir, "flood-a").workspace, "flooded");
      const stop = new AbortController();
      // Bounded: at most 400 sleeping children (a shell would exit or retry on the first failed fork); all die with the command.
      const script = [
        "import os, time",
        "n, err = 0, ''",
        "for _ in range(400):",
        "    try:",
        "        pid = os.fork()",
        "    except OSError as e:",
        "        err = str(e)",
        "        break",
        "    if pid == 0:",
        "        time.sleep(300)",
        "        os._exit(0)",
        "    n += 1",
        "print('forked', n, err, flush=True)",
        "open('flooded', 'w').write(str(n))",
        "time.sleep(300)",
      ].join("\n");
      const flood = a.executeCommand(`python3 -c "${script}"`, { signal: stop.signal, timeoutMs: 60_000 });
      await whenExists(marker);
      const pidsCurrent = Number(readFileSync(path.join(a.cgroup?.dirs.pids as string, "pids.current"), "utf8"));
      expect(pidsCurrent).toBeLessThanOrEqual(256);
      expect(pidsCurrent).toBeGreaterThan(200);
      const other = await b.executeCommand("for i in 1 2 3 4 5 6 7 8; do sh -c 'echo $$' >/dev/null; done; echo still-works");
      expect(other.exitCode).toBe(0);
      expect(other.stdout).toContain("still-works");
      stop.abort();
      const res = await flood;
      expect(res.stdout).toMatch(/forked \d+ .*Resource temporarily unavailable/);
      expect(Number(/forked (\d+)/.exec(res.stdout)?.[1])).toBeLessThan(256);
    }, 30_000);

    it("with the defaults a 3 GiB allocation fails and a 1 GiB one succeeds", async () => {
      const sb = await sandboxOf(provider, "memory");
      const big = await sb.executeCommand(`python3 -c "b = bytearray(3 << 30); print('allocated')"`);
      expect(big.stdout).not.toContain("allocated");
      expect(big.exitCode).toBe(137); // the cgroup's OOM killer
      const ok = await sb.executeCommand(`python3 -c "b = bytearray(1 << 30); print('allocated')"`);
      expect(ok.stdout).toContain("allocated");
    }, 30_000);

    it("limits are written to the cgroup and the cgroup is removed on release", async () => {
      const p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { cpu_cores: 0.5, processes: 64 } }), { baseDir: base.dir });
      const id = await p.acquire("cg-life");
      const sb = p.get(id) as BwrapSandbox;
      const res = await sb.executeCommand("sleep 300 & echo started");
      expect(res.stdout).toContain("started");
      const dirs = sb.cgroup?.dirs ?? {};
      expect(readFileSync(path.join(dirs.pids as string, "pids.max"), "utf8").trim()).toBe("64");
      if (CG?.version === 1 && dirs.cpu) expect(readFileSync(path.join(dirs.cpu, "cpu.cfs_quota_us"), "utf8").trim()).toBe("50000");
      if (CG?.version === 2 && dirs.cpu) expect(readFileSync(path.join(dirs.cpu, "cpu.max"), "utf8").trim()).toBe("50000 100000");
      await p.release(id);
      for (const d of Object.values(dirs)) expect(existsSync(d)).toBe(false);
    }, 30_000);
  });

  it("without cgroups the rlimit fallback still makes a 3 GiB allocation fail", async () => {
    const p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base.dir, cgroups: { version: null, parents: {}, notes: [] } });
    expect(p.limits.report.mechanism).toBe("rlimit");
    const sb = await sandboxOf(p, "rlimit-memory");
    const big = await sb.executeCommand(`python3 -c "b = bytearray(3 << 30); print('allocated')"`);
    expect(big.stdout).not.toContain("allocated");
    expect(big.stderr).toMatch(/MemoryError/);
    await p.shutdown();
  }, 30_000);

  it("/tmp is size-limited (tmp_size_bytes)", async () => {
    const p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { tmp_size_bytes: 8 * 1024 * 1024 } }), { baseDir: base.dir });
    const sb = await sandboxOf(p, "tmp-size");
    const res = await sb.executeCommand("head -c 16M /dev/zero > /tmp/fill; echo rc=$?; wc -c < /tmp/fill");
    expect(res.stderr).toMatch(/No space left/);
    expect(res.stdout).toContain("rc=1");
    expect(Number(res.stdout.trim().split("\n").pop())).toBeLessThanOrEqual(8 * 1024 * 1024);
    await p.shutdown();
  }, 30_000);

  it("/dev is not a second, unbounded /tmp: nothing can be written there and /dev/shm is size-limited too", async () => {
    const p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { tmp_size_bytes: 8 * 1024 * 1024 } }), { baseDir: base.dir });
    const sb = await sandboxOf(p, "dev-size");
    // bwrap's /dev is a tmpfs the sandbox uid owns, sized at half the RAM: without a memory cgroup nothing else bounds it.
    const res = await sb.executeCommand(
      "head -c 16M /dev/zero > /dev/fill; echo dev=$?; head -c 16M /dev/zero > /dev/shm/fill; echo shm=$?; wc -c < /dev/shm/fill; echo hi > /dev/null && echo null-ok; ls /dev/zero /dev/urandom /dev/pts >/dev/null && echo devices-ok",
    );
    expect(res.stdout).not.toContain("dev=0");
    expect(res.stderr).toMatch(/\/dev\/fill: Read-only file system/);
    expect(res.stdout).toContain("shm=1");
    expect(Number(res.stdout.split("\n").find((l) => /^\d+$/.test(l.trim())))).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(res.stdout).toContain("null-ok");
    expect(res.stdout).toContain("devices-ok");
    await p.shutdown();
  }, 30_000);

  describe("per-thread disk quota (5 MiB configured)", () => {
    const MiB = 1024 * 1024;
    let p: BwrapSandboxProvider;
    let sb: BwrapSandbox;
    const ws = () => threadDirs(base.dir, "quota").workspace;
    beforeAll(async () => {
      p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { disk_quota_bytes: 5 * MiB } }), { baseDir: base.dir });
      sb = await sandboxOf(p, "quota");
    });
    afterAll(() => p.shutdown());

    it("a host-side write that would pass the quota is refused before anything is written", async () => {
      const err = await sb.writeFile("/mnt/user-data/workspace/six.txt", "x".repeat(6 * MiB)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxError);
      expect((err as SandboxError).code).toBe("disk_quota_exceeded");
      expect((err as Error).message).toMatch(/over the quota of 5 MiB \(sandbox\.limits\.disk_quota_bytes\)/);
      expect(existsSync(path.join(ws(), "six.txt"))).toBe(false);
      await sb.writeFile("/mnt/user-data/workspace/small.txt", "fits");
    });

    it("bash filling the disk gets a clear notice, and write_file is refused until files are deleted", async () => {
      const res = await sb.executeCommand("head -c 8M /dev/zero > big.bin; echo wrote");
      expect(res.stdout).toContain("wrote");
      expect(res.stderr).toMatch(/Disk quota exceeded: .* over the disk quota of 5 MiB \(sandbox\.limits\.disk_quota_bytes\); further writes are refused/);
      const writeFile = createWriteFileTool({ provider: p });
      const rt = fakeToolRuntime("quota");
      const refused = (await writeFile.execute({ description: "d", path: "/mnt/user-data/outputs/report.md", content: "# report", append: false }, rt)) as { content: string } | string;
      const text = typeof refused === "string" ? refused : refused.content;
      expect(text).toMatch(/^Error: Disk quota exceeded: .*sandbox\.limits\.disk_quota_bytes/);
      expect(existsSync(path.join(threadDirs(base.dir, "quota").outputs, "report.md"))).toBe(false);
      // Over quota, commands still run, so the agent can clean up.
      const rm = await sb.executeCommand("rm big.bin && echo removed");
      expect(rm.stdout).toContain("removed");
      expect(rm.stderr).not.toMatch(/quota/);
      const ok = (await writeFile.execute({ description: "d", path: "/mnt/user-data/outputs/report.md", content: "# report", append: false }, rt)) as { content: string } | string;
      expect(typeof ok === "string" ? ok : ok.content).toBe("OK");
    });

    it("files below a path longer than the host's PATH_MAX still count (the walk cannot skip them)", async () => {
      // Relative mkdir/cd nests deeper than 4096 bytes of host path; a walk that skips what it cannot lstat would miss the 8 MiB.
      const deep = "python3 -c 'import os\nfor _ in range(25): os.mkdir(\"d\" * 200); os.chdir(\"d\" * 200)\nopen(\"hidden.bin\", \"wb\").write(bytes(8 << 20))'";
      const rm = () => sb.executeCommand(`rm -rf "$(printf 'd%.0s' $(seq 200))" && echo removed`);
      try {
        const res = await sb.executeCommand(`${deep} && echo wrote`);
        expect(res.stdout).toContain("wrote");
        expect(res.stderr).toMatch(/Disk quota exceeded: .*cannot be measured .*ENAMETOOLONG.*sandbox\.limits\.disk_quota_bytes/);
        const refused = await sb.writeFile("/mnt/user-data/workspace/after.txt", "x").catch((e: unknown) => e);
        expect((refused as SandboxError).code).toBe("disk_quota_exceeded");
      } finally {
        // Removed from inside (rm walks by directory fd); the host's recursive rm stops at PATH_MAX too.
        const removed = await rm();
        expect(removed.stdout).toContain("removed");
        expect(removed.stderr).not.toMatch(/quota/);
      }
    }, 30_000);

    it("a command that keeps running after passing the quota is killed", async () => {
      // Without the quota watch this command would sleep 20 s and print "survived".
      const res = await sb.executeCommand("head -c 8M /dev/zero > grow.bin; sleep 20; echo survived", { timeoutMs: 25_000 });
      expect(res.stdout).not.toContain("survived");
      expect(res.timedOut).toBe(false);
      expect(res.exitCode).toBe(137);
      expect(res.stderr).toMatch(/Command killed: disk quota exceeded: .*sandbox\.limits\.disk_quota_bytes/);
      await sb.executeCommand("rm -f grow.bin");
    }, 30_000);
  });

  it("a staged data dir (under a 0700 directory) gets the same cgroup, /tmp size and --args chain", async () => {
    const closed = mkdtempSync(path.join(base.dir, "closed-"));
    chmodSync(closed, 0o700);
    const p = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", limits: { tmp_size_bytes: 4 * 1024 * 1024 } }), { baseDir: closed });
    if (!p.stage) {
      await p.shutdown();
      return; // not root: nothing is staged
    }
    const sb = await sandboxOf(p, "staged");
    const res = await sb.executeCommand("echo ok > f && cat f && df -k /tmp | tail -1 && for q in /proc/[0-9]*; do cat $q/cmdline; done | base64 -w0");
    const lines = res.stdout.trim().split("\n");
    expect(lines[0]).toBe("ok");
    expect(lines[1]).toMatch(/^tmpfs\s+4096\s/);
    expect(Buffer.from(lines[2], "base64").toString("utf8")).not.toContain(base.dir);
    if (HAS_CGROUPS) {
      // The command ran inside the sandbox's memory cgroup: its peak usage is not zero.
      const mem = sb.cgroup?.dirs.memory as string;
      const peakFile = ["memory.max_usage_in_bytes", "memory.peak"].map((f) => path.join(mem, f)).find((f) => existsSync(f)) as string;
      expect(Number(readFileSync(peakFile, "utf8"))).toBeGreaterThan(0);
    }
    await p.shutdown();
  }, 30_000);

  it("no host path in any /proc/*/cmdline or environ inside the sandbox", async () => {
    const sb = await sandboxOf(provider, "no-host-paths");
    // base64, so the output's host-path masking cannot hide a leak from this test.
    const res = await sb.executeCommand("for p in /proc/[0-9]*; do cat $p/cmdline $p/environ 2>/dev/null; done | base64 -w0");
    const seen = Buffer.from(res.stdout.trim(), "base64").toString("utf8");
    expect(seen).toContain("bwrap"); // pid 1 (bwrap's init) was read
    expect(seen).not.toContain(base.dir);
    // Control: the inline form of the same command line does carry the host path.
    expect(sb.commandArgv("true").join(" ")).toContain(base.dir);
  }, 30_000);
});
