import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createSandboxProvider,
  LOCAL_HOST_BASH_DISABLED_MESSAGE,
  LocalSandboxProvider,
  parseSandboxConfig,
  threadDirs,
  withKeyedLock,
} from "../../src/sandbox";
import { PathAccessError, SandboxError, ValidationError } from "../../src/errors";
import { tempBase } from "./helpers";

/** The references Node keeps in a signal for each `AbortSignal.any` made from it (an internal; 0 when absent). */
function dependantSignals(signal: AbortSignal): number {
  const sym = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  return sym ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[sym]?.size ?? 0) : 0;
}

const bases: Array<{ cleanup(): void }> = [];
afterEach(() => bases.splice(0).forEach((b) => b.cleanup()));
function base() {
  const b = tempBase("dflocal-");
  bases.push(b);
  return b.dir;
}

describe("thread paths", () => {
  it("lays out users/{user}/threads/{thread}/user-data and validates ids", () => {
    const d = threadDirs("/srv/df", "t-1", "alice");
    expect(d.workspace).toBe("/srv/df/users/alice/threads/t-1/user-data/workspace");
    expect(threadDirs("/srv/df", "t-1").outputs).toBe("/srv/df/users/default/threads/t-1/user-data/outputs");
    expect(() => threadDirs("/srv/df", "../etc")).toThrow(ValidationError);
    expect(() => threadDirs("/srv/df", "ok", "a/b")).toThrow(ValidationError);
    expect(() => threadDirs("/srv/df", "x".repeat(65))).toThrow(ValidationError);
  });
});

describe("LocalSandboxProvider", () => {
  it("maps virtual paths, creates dirs lazily on acquire, and leases", async () => {
    const dir = base();
    const p = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: dir });
    const dirs = threadDirs(dir, "t1");
    expect(existsSync(dirs.workspace)).toBe(false);
    const id = await p.acquire("t1");
    expect(await p.acquire("t1")).toBe(id);
    expect(p.leaseCount(id)).toBe(2);
    const sb = p.get(id)!;
    await sb.writeFile("/mnt/user-data/outputs/sub/r.md", "# hi");
    expect(readFileSync(path.join(dirs.outputs, "sub/r.md"), "utf8")).toBe("# hi");
    await sb.writeFile("/mnt/user-data/outputs/sub/r.md", "\nmore", { append: true });
    expect(await sb.readFile("/mnt/user-data/outputs/sub/r.md")).toBe("# hi\nmore");
    await p.release(id);
    expect(p.get(id)).toBe(sb); // one lease left (e.g. a sub-agent)
    await p.release(id);
    expect(p.get(id)).toBeUndefined();
  });

  it("refuses host bash by default with DeerFlow's message", async () => {
    const p = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: base() });
    const sb = p.get(await p.acquire("t1"))!;
    await expect(sb.executeCommand("echo hi")).rejects.toThrow(LOCAL_HOST_BASH_DISABLED_MESSAGE);
    expect(LOCAL_HOST_BASH_DISABLED_MESSAGE).toMatch(/^Host bash execution is disabled for LocalSandboxProvider/);
  });

  it("runs host bash when allowed: workspace cwd, virtual paths rewritten, host paths masked, secrets scrubbed", async () => {
    const dir = base();
    process.env.DF_TEST_API_KEY = "sk-should-not-leak";
    try {
      const p = new LocalSandboxProvider(parseSandboxConfig({ allow_host_bash: true }), { baseDir: dir });
      const sb = p.get(await p.acquire("t1"))!;
      const r = await sb.executeCommand('pwd; echo data > /mnt/user-data/outputs/o.txt; cat /mnt/user-data/outputs/o.txt; echo "k=$DF_TEST_API_KEY"');
      expect(r.stdout).toContain("/mnt/user-data/workspace\n");
      expect(r.stdout).toContain("data");
      expect(r.stdout).not.toContain(dir);
      expect(r.stdout).toContain("k=\n");
      const t = await sb.executeCommand("sleep 5", { timeoutMs: 300 });
      expect(t.timedOut).toBe(true);
    } finally {
      delete process.env.DF_TEST_API_KEY;
    }
  });

  it("a command stops when its caller's signal aborts, and leaves nothing on that signal once it is done", async () => {
    const dir = base();
    const p = new LocalSandboxProvider(parseSandboxConfig({ allow_host_bash: true }), { baseDir: dir });
    const sb = p.get(await p.acquire("t-sig"))!;
    const longLived = new AbortController(); // e.g. a caller's signal reused across many runs
    for (let i = 0; i < 20; i++) expect((await sb.executeCommand("true", { signal: longLived.signal })).exitCode).toBe(0);
    expect(getEventListeners(longLived.signal, "abort")).toEqual([]);
    expect(dependantSignals(longLived.signal)).toBe(0);
    const cancel = new AbortController();
    const started = Date.now();
    const running = sb.executeCommand("sleep 5", { signal: cancel.signal });
    setTimeout(() => cancel.abort(), 100);
    await running.catch(() => undefined);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("rejects traversal, unknown roots, symlink escapes, and writes to read-only mounts", async () => {
    const dir = base();
    const shared = path.join(dir, "shared");
    mkdirSync(shared);
    writeFileSync(path.join(shared, "ref.txt"), "REF");
    const skills = path.join(dir, "skills");
    mkdirSync(path.join(skills, "public"), { recursive: true });
    writeFileSync(path.join(skills, "public", "SKILL.md"), "skill");
    const p = new LocalSandboxProvider(
      parseSandboxConfig({ mounts: [{ host_path: shared, container_path: "/mnt/shared", read_only: true }] }),
      { baseDir: dir, skillsPath: skills },
    );
    const sb = p.get(await p.acquire("t1"))!;
    await expect(sb.readFile("/mnt/user-data/workspace/../../x")).rejects.toThrow("Access denied: path traversal detected");
    await expect(sb.readFile("/etc/passwd")).rejects.toThrow(PathAccessError);
    await expect(sb.readFile("relative.txt")).rejects.toThrow(PathAccessError);
    expect(await sb.readFile("/mnt/shared/ref.txt")).toBe("REF");
    await expect(sb.writeFile("/mnt/shared/new.txt", "x")).rejects.toThrow(/read-only/);
    expect(await sb.readFile("/mnt/skills/public/SKILL.md")).toBe("skill");
    await expect(sb.writeFile("/mnt/skills/public/SKILL.md", "x")).rejects.toThrow(/read-only/);
    const ws = threadDirs(dir, "t1").workspace;
    symlinkSync("/etc/passwd", path.join(ws, "link"));
    symlinkSync("/nonexistent/target", path.join(ws, "dangling"));
    await expect(sb.readFile("/mnt/user-data/workspace/link")).rejects.toThrow(/outside the allowed/);
    await expect(sb.writeFile("/mnt/user-data/workspace/dangling", "x")).rejects.toThrow(/outside the allowed/);
    symlinkSync(path.join(ws, "inner.txt"), path.join(ws, "ok-link"));
    writeFileSync(path.join(ws, "inner.txt"), "inside");
    expect(await sb.readFile("/mnt/user-data/workspace/ok-link")).toBe("inside");
  });

  it("masks host paths in error messages", async () => {
    const dir = base();
    const p = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: dir });
    const sb = p.get(await p.acquire("t1"))!;
    const err = await sb.readFile("/mnt/user-data/workspace/missing.txt").catch((e) => e as Error);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as Error).message).toBe("File not found: /mnt/user-data/workspace/missing.txt");
    const ws = threadDirs(dir, "t1").workspace;
    expect(sb.maskPaths(`failed at ${ws}/a.txt`)).toBe("failed at /mnt/user-data/workspace/a.txt");
  });

  it("lists, globs and greps with virtual paths", async () => {
    const p = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: base() });
    const sb = p.get(await p.acquire("t1"))!;
    await sb.writeFile("/mnt/user-data/workspace/src/a.ts", "const Foo = 1;\nfoo();\n");
    await sb.writeFile("/mnt/user-data/workspace/src/deep/b.ts", "FOO\n");
    await sb.writeFile("/mnt/user-data/workspace/node_modules/x/c.ts", "foo\n");
    const ls = await sb.listDir("/mnt/user-data/workspace", 2);
    expect(ls.map((e) => e.path)).toEqual([
      "/mnt/user-data/workspace/node_modules", // listed but not expanded
      "/mnt/user-data/workspace/src",
      "/mnt/user-data/workspace/src/a.ts",
      "/mnt/user-data/workspace/src/deep",
    ]);
    const g = await sb.glob("/mnt/user-data/workspace", "**/*.ts");
    expect(g.items).toEqual(["/mnt/user-data/workspace/src/a.ts", "/mnt/user-data/workspace/src/deep/b.ts"]);
    expect((await sb.glob("/mnt/user-data/workspace", "*.ts")).items).toEqual([]);
    expect((await sb.glob("/mnt/user-data/workspace", "**/*.ts", { maxResults: 1 })).truncated).toBe(true);
    const hits = await sb.grep("/mnt/user-data/workspace", "foo");
    expect(hits.items.map((h) => `${h.path}:${h.line}`)).toEqual([
      "/mnt/user-data/workspace/src/a.ts:1",
      "/mnt/user-data/workspace/src/a.ts:2",
      "/mnt/user-data/workspace/src/deep/b.ts:1",
    ]);
    expect((await sb.grep("/mnt/user-data/workspace", "foo", { caseSensitive: true })).items).toHaveLength(1);
    expect((await sb.grep("/mnt/user-data/workspace/src/a.ts", "(", { literal: true })).items).toHaveLength(1);
  });
});

describe("createSandboxProvider", () => {
  it("selects local for DeerFlow's class path and 'local'", () => {
    const dir = base();
    expect(createSandboxProvider({ use: "deerflow.sandbox.local:LocalSandboxProvider" }, { baseDir: dir }).kind).toBe("local");
    expect(createSandboxProvider({ use: "local" }, { baseDir: dir }).kind).toBe("local");
  });
  it("rejects unsupported providers clearly", () => {
    expect(() =>
      createSandboxProvider({ use: "deerflow.community.e2b_sandbox:E2BSandboxProvider" }, { baseDir: base() }),
    ).toThrow("Sandbox provider 'deerflow.community.e2b_sandbox:E2BSandboxProvider' is not supported yet; use 'local', 'bwrap' or 'docker'");
  });
  it("defaults to bwrap when it works, else local with a warning", () => {
    const warn = vi.fn();
    const p = createSandboxProvider(undefined, { baseDir: base(), warn });
    if (p.kind === "local") expect(warn).toHaveBeenCalledWith(expect.stringMatching(/NO isolation/));
    else expect(p.kind).toBe("bwrap");
  });
  const fixture = path.resolve(__dirname, "../../../../../shared/fixtures/deerflow/config.example.yaml");
  if (!existsSync(fixture)) console.warn(`[sandbox tests] SKIPPING DeerFlow's example sandbox section: ${fixture} is absent`);
  it.skipIf(!existsSync(fixture))("accepts DeerFlow's example sandbox section unchanged", async () => {
    const { parse } = await import("yaml");
    const cfg = parse(readFileSync(fixture, "utf8")) as { sandbox: unknown };
    const parsed = parseSandboxConfig(cfg.sandbox);
    expect(parsed.allow_host_bash).toBe(false);
    expect(createSandboxProvider(cfg.sandbox, { baseDir: base() }).kind).toBe("local");
  });
});

describe("withKeyedLock", () => {
  it("serialises per key", async () => {
    const order: string[] = [];
    await Promise.all([
      withKeyedLock("k", async () => {
        order.push("a1");
        await new Promise((r) => setTimeout(r, 20));
        order.push("a2");
      }),
      withKeyedLock("k", async () => {
        order.push("b1");
      }),
    ]);
    expect(order).toEqual(["a1", "a2", "b1"]);
  });
});

