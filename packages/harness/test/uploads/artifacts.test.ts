import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PathAccessError } from "../../src/errors";
import { guessMimeType, readArtifact, threadPaths } from "../../src/uploads";

function setup() {
  const base = mkdtempSync(path.join(tmpdir(), "df-art-"));
  const paths = threadPaths(base, "default", "t1");
  for (const d of [paths.outputs, paths.uploads, paths.workspace]) mkdirSync(d, { recursive: true });
  return { base, paths };
}

describe("readArtifact", () => {
  it("reads outputs with a guessed MIME type; text-like unknown files are text/plain", async () => {
    const { paths } = setup();
    writeFileSync(path.join(paths.outputs, "report.md"), "# Report");
    writeFileSync(path.join(paths.outputs, "notes.weird"), "plain words");
    writeFileSync(path.join(paths.outputs, "blob.weird"), Buffer.from([0, 1, 2, 255]));
    const a = await readArtifact(paths, "/mnt/user-data/outputs/report.md");
    expect(a.bytes.toString()).toBe("# Report");
    expect(a.mimeType).toBe("text/markdown");
    expect(a.size).toBe(8);
    expect((await readArtifact(paths, "mnt/user-data/outputs/notes.weird")).mimeType).toBe("text/plain");
    expect((await readArtifact(paths, "/mnt/user-data/outputs/blob.weird")).mimeType).toBe("application/octet-stream");
    expect(guessMimeType("x.PNG")).toBe("image/png");
  });

  it("blocks a planted symlink that escapes the thread directory", async () => {
    const { base, paths } = setup();
    const secret = path.join(base, "secret.txt");
    writeFileSync(secret, "TOP SECRET");
    symlinkSync(secret, path.join(paths.outputs, "innocent.txt"));
    symlinkSync("/etc", path.join(paths.outputs, "etcdir"));
    await expect(readArtifact(paths, "/mnt/user-data/outputs/innocent.txt")).rejects.toBeInstanceOf(PathAccessError);
    await expect(readArtifact(paths, "/mnt/user-data/outputs/etcdir/hostname")).rejects.toBeInstanceOf(PathAccessError);
    // a symlink that stays inside user-data is fine
    writeFileSync(path.join(paths.workspace, "real.txt"), "inside");
    symlinkSync(path.join(paths.workspace, "real.txt"), path.join(paths.outputs, "link.txt"));
    expect((await readArtifact(paths, "/mnt/user-data/outputs/link.txt")).bytes.toString()).toBe("inside");
  });

  it("blocks .. traversal, other roots, directories and missing files with distinct errors", async () => {
    const { base, paths } = setup();
    writeFileSync(path.join(base, "users", "default", "threads", "t1", "other.txt"), "x");
    await expect(readArtifact(paths, "/mnt/user-data/outputs/../../other.txt")).rejects.toBeInstanceOf(PathAccessError);
    await expect(readArtifact(paths, "/mnt/user-data/../../../../etc/passwd")).rejects.toBeInstanceOf(PathAccessError);
    await expect(readArtifact(paths, "/etc/passwd")).rejects.toMatchObject({ status: 400, code: "artifact_bad_path" });
    await expect(readArtifact(paths, "/mnt/user-data/outputs")).rejects.toMatchObject({ status: 400, code: "artifact_is_directory" });
    await expect(readArtifact(paths, "/mnt/user-data/outputs/none.txt")).rejects.toMatchObject({ status: 404 });
  });
});
