import { lstatSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { threadDirs } from "../../../src/sandbox";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled();

describe.skipIf(!enabled)("DockerSandbox: commands and file tools (real Docker)", () => {
  let fx: DockerFixture;
  let sandbox: DockerSandbox;
  let id = "";

  beforeAll(async () => {
    fx = dockerFixture({ environment: { GREETING: "hello-from-config" } });
    id = await fx.provider.acquire("thread-a");
    sandbox = fx.provider.get(id) as DockerSandbox;
  });

  afterAll(async () => {
    await fx?.cleanup();
  });

  it("runs bash in the workspace as the unprivileged sandbox uid, with the configured environment", async () => {
    const res = await sandbox.executeCommand('pwd; id -u; echo "$GREETING $EXTRA"', { env: { EXTRA: "x1" } });
    expect(res.exitCode).toBe(0);
    const expectedUid = process.getuid?.() === 0 ? "65534" : String(process.getuid?.());
    expect(res.stdout).toBe(`/mnt/user-data/workspace\n${expectedUid}\nhello-from-config x1\n`);
    expect(sandbox.kind).toBe("docker");
    expect(sandbox.isolated).toBe(true);
  });

  it("names the container deterministically from user+thread", () => {
    const info = fx.provider.containerOf(id);
    expect(info?.name).toMatch(new RegExp(`^${fx.prefix}-[0-9a-f]{16}$`));
    expect(fx.provider.containerNameFor("thread-a")).toBe(info?.name);
    expect(fx.provider.containerNameFor("thread-b")).not.toBe(info?.name);
  });

  it("file tools write on the host and the container sees them; uploads are visible inside", async () => {
    await sandbox.writeFile("/mnt/user-data/workspace/notes/a.txt", "line1\nline2\n");
    const dirs = threadDirs(fx.baseDir, "thread-a");
    writeFileSync(path.join(dirs.uploads, "report.csv"), "a,b\n1,2\n");
    const res = await sandbox.executeCommand("cat notes/a.txt; cat /mnt/user-data/uploads/report.csv");
    expect(res.stdout).toBe("line1\nline2\na,b\n1,2\n");
    expect(await sandbox.readFile("/mnt/user-data/workspace/notes/a.txt")).toBe("line1\nline2\n");
    const listing = await sandbox.listDir("/mnt/user-data/workspace");
    expect(listing.map((e) => e.path)).toContain("/mnt/user-data/workspace/notes/a.txt");
    const grep = await sandbox.grep("/mnt/user-data/workspace", "line2");
    expect(grep.items[0]).toMatchObject({ path: "/mnt/user-data/workspace/notes/a.txt", line: 2 });
  });

  it("artifacts written by a command in outputs are readable by the server and not root-owned", async () => {
    const res = await sandbox.executeCommand("echo artifact > /mnt/user-data/outputs/result.txt && mkdir -p /mnt/user-data/outputs/sub && echo x > /mnt/user-data/outputs/sub/y");
    expect(res.exitCode).toBe(0);
    const host = path.join(threadDirs(fx.baseDir, "thread-a").outputs, "result.txt");
    expect(readFileSync(host, "utf8")).toBe("artifact\n");
    const st = statSync(host);
    if (process.getuid?.() === 0) expect(st.uid).toBe(65534);
    else expect(st.uid).toBe(process.getuid?.());
    expect(st.mode & 0o044).toBe(0o044);
    expect(await sandbox.readFile("/mnt/user-data/outputs/sub/y")).toBe("x\n");
  });

  it("mounts the skills read-only at /mnt/skills", async () => {
    const res = await sandbox.executeCommand("cat /mnt/skills/public/demo/SKILL.md; echo tamper > /mnt/skills/public/demo/SKILL.md; echo rc=$?");
    expect(res.stdout).toContain("# demo skill");
    expect(res.stdout).toMatch(/rc=[12]/);
    expect(res.stderr).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(fx.skillsDir, "public/demo/SKILL.md"), "utf8")).toBe("# demo skill\n");
    await expect(sandbox.writeFile("/mnt/skills/public/demo/SKILL.md", "x")).rejects.toThrow();
  });

  it("a symlink planted by a command cannot make the host file tools escape", async () => {
    writeFileSync(path.join(fx.baseDir, "host-secret.txt"), "HOST-SECRET");
    const outside = path.join(fx.baseDir, "host-secret.txt");
    const res = await sandbox.executeCommand(`ln -s ${outside} /mnt/user-data/workspace/link.txt; ln -s / /mnt/user-data/workspace/rootlink; ls -l /mnt/user-data/workspace`);
    expect(res.exitCode).toBe(0);
    expect(lstatSync(path.join(threadDirs(fx.baseDir, "thread-a").workspace, "link.txt")).isSymbolicLink()).toBe(true);
    await expect(sandbox.readFile("/mnt/user-data/workspace/link.txt")).rejects.toThrow(/denied|symbolic/i);
    await expect(sandbox.readFile(`/mnt/user-data/workspace/rootlink${outside}`)).rejects.toThrow(/denied|symbolic|not found/i);
    await expect(sandbox.writeFile("/mnt/user-data/workspace/link.txt", "pwned")).rejects.toThrow();
    expect(readFileSync(outside, "utf8")).toBe("HOST-SECRET");
    await expect(sandbox.readFile("/mnt/user-data/../../etc/passwd")).rejects.toThrow(/traversal/);
    // Inside the container the link dangles: the host path does not exist there.
    const inside = await sandbox.executeCommand("cat /mnt/user-data/workspace/link.txt");
    expect(inside.exitCode).not.toBe(0);
  });

  it("has a read-only root, a writable /tmp, no capabilities and no Docker socket", async () => {
    const res = await sandbox.executeCommand(
      "touch /etc/x 2>/dev/null && echo root-writable; echo t > /tmp/t && echo tmp-ok; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; ls /var/run/docker.sock /run/docker.sock 2>&1 | head -2",
    );
    expect(res.stdout).not.toContain("root-writable");
    expect(res.stdout).toContain("tmp-ok");
    expect(res.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(res.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(res.stdout).toMatch(/Seccomp:\s+2/);
    expect(res.stdout).toMatch(/No such file/);
  });

  it("applies the timeout, output cap and cancellation like bubblewrap", async () => {
    const t = await sandbox.executeCommand("sleep 30", { timeoutMs: 300 });
    expect(t).toMatchObject({ timedOut: true, exitCode: 137 });
    const big = await sandbox.executeCommand("yes abcdefgh | head -c 5000000");
    expect(big.truncated).toBe(true);
    expect(big.stdout).toContain("[output capped:");
    const ac = new AbortController();
    ac.abort();
    const pre = await sandbox.executeCommand("echo never", { signal: ac.signal });
    expect(pre.exitCode).toBe(-1);
  });
});
