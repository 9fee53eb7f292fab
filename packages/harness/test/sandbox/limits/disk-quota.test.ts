import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxError } from "../../../src/errors";
import { assertThreadDiskQuota, measureDiskUsage, threadDiskQuota, ThreadDiskQuota } from "../../../src/sandbox/limits";
import { tempBase } from "../helpers";

const MiB = 1024 * 1024;
const base = tempBase("dfquota-");
afterAll(() => base.cleanup());

function dir(name: string): string {
  const d = path.join(base.dir, name);
  mkdirSync(path.join(d, "workspace"), { recursive: true });
  return d;
}

describe("disk quota accounting", () => {
  it("counts allocated bytes, hard links once, and stops at the entry bound", async () => {
    const d = dir("measure");
    writeFileSync(path.join(d, "workspace", "a.bin"), Buffer.alloc(2 * MiB, 1));
    linkSync(path.join(d, "workspace", "a.bin"), path.join(d, "workspace", "b.bin"));
    const u = await measureDiskUsage(d);
    expect(u.complete).toBe(true);
    expect(u.bytes).toBeGreaterThanOrEqual(2 * MiB);
    expect(u.bytes).toBeLessThan(3 * MiB);
    expect((await measureDiskUsage(d, 1)).complete).toBe(false);
  });

  it("a part of the tree the walk cannot read counts as over quota instead of as empty", async () => {
    const d = dir("deep");
    // Deeper than PATH_MAX from the root: lstat/readdir by full path fail with ENAMETOOLONG.
    execFileSync("python3", ["-c", "import os\nfor _ in range(25): os.mkdir('d' * 200); os.chdir('d' * 200)\nopen('f', 'wb').write(bytes(1 << 20))"], { cwd: path.join(d, "workspace") });
    try {
      const u = await measureDiskUsage(d);
      expect(u.complete).toBe(false);
      expect(u.unmeasured).toMatch(/^workspace\/d+.*ENAMETOOLONG/);
      const q = new ThreadDiskQuota(d, 64 * MiB);
      const err = await q.reserve(1, "/mnt/user-data/workspace/x").catch((e: unknown) => e);
      expect((err as SandboxError).code).toBe("disk_quota_exceeded");
      expect((err as Error).message).toMatch(/cannot be measured .*ENAMETOOLONG/);
    } finally {
      execFileSync("/bin/rm", ["-rf", d]);
    }
  });

  it("refuses growth past the quota with the setting named, and never on a stale cache", async () => {
    const d = dir("reserve");
    const q = new ThreadDiskQuota(d, 4 * MiB);
    await q.reserve(3 * MiB, "/mnt/user-data/workspace/a"); // counted, not written
    const err = await q.reserve(2 * MiB, "/mnt/user-data/workspace/b").catch((e: unknown) => e);
    // The cache said 3 MiB, but a fresh walk finds nothing written: accepted.
    expect(err).toBeUndefined();
    writeFileSync(path.join(d, "workspace", "big.bin"), Buffer.alloc(4 * MiB, 1));
    await q.measure();
    const refused = await q.reserve(1024, "/mnt/user-data/outputs/x.md").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SandboxError);
    expect((refused as SandboxError).code).toBe("disk_quota_exceeded");
    expect((refused as Error).message).toContain("/mnt/user-data/outputs/x.md");
    expect((refused as Error).message).toContain("sandbox.limits.disk_quota_bytes");
    // Shrinking always passes, and deleting files is seen on the next measurement.
    await q.reserve(-MiB, "/mnt/user-data/workspace/big.bin");
    rmSync(path.join(d, "workspace", "big.bin"));
    await expect(q.reserve(1024, "/mnt/user-data/outputs/x.md")).resolves.toBeUndefined();
  });

  it("uploads share the thread's quota through assertThreadDiskQuota", async () => {
    const d = dir("uploads");
    writeFileSync(path.join(d, "workspace", "data.bin"), Buffer.alloc(3 * MiB, 1));
    await expect(assertThreadDiskQuota(d, 4 * MiB, 2 * MiB, "/mnt/user-data/uploads/report.pdf")).rejects.toMatchObject({ code: "disk_quota_exceeded" });
    await expect(assertThreadDiskQuota(d, 4 * MiB, 512 * 1024, "/mnt/user-data/uploads/small.pdf")).resolves.toBeUndefined();
    expect(threadDiskQuota(d, 4 * MiB)).toBe(threadDiskQuota(`${d}/`, 4 * MiB));
    await expect(assertThreadDiskQuota(d, 0, 100 * MiB, "x")).resolves.toBeUndefined(); // 0 = no quota
  });
});
