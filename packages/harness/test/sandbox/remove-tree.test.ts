import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTree } from "../../src/sandbox";

describe("removeTree", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "df-rmtree-"));
  afterAll(() => removeTree(root));

  it("removes a tree nested past PATH_MAX, as a sandboxed mkdir/cd loop makes it (the thread stays deletable)", async () => {
    const dir = path.join(root, "thread");
    // 260 levels of 30-character names: about 8 KB of path, twice Linux's PATH_MAX.
    const script = "import os,sys\nos.makedirs(sys.argv[1]); os.chdir(sys.argv[1])\nfor _ in range(260):\n    os.mkdir('a'*30); os.chdir('a'*30)\nopen('f','w').write('deep')\n";
    execFileSync("python3", ["-c", script, dir]);
    await removeTree(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it("removes an ordinary tree and accepts a missing one", async () => {
    const dir = path.join(root, "plain");
    execFileSync("mkdir", ["-p", path.join(dir, "a", "b")]);
    await removeTree(dir);
    expect(existsSync(dir)).toBe(false);
    await expect(removeTree(dir)).resolves.toBeUndefined();
  });
});
