import { spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SandboxError } from "../../../src/errors";
import { planHostRootfs, sharedLibraries, writeRootfs } from "../../../src/sandbox/image";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("planHostRootfs", () => {
  it("carries the programs with their ldd closure, keeps the host's links, and reports what this host lacks", () => {
    const plan = planHostRootfs({ programs: ["sh", "sleep", "deerflow-no-such-program"] });
    expect(plan.missingPrograms).toEqual(["deerflow-no-such-program"]);
    expect(Object.keys(plan.programs).sort()).toEqual(["sh", "sleep"]);
    expect(plan.missingLibraries).toEqual([]);
    // every library the host's loader resolves for sleep is in the image
    const real = spawnSync("realpath", [plan.programs.sleep], { encoding: "utf8" }).stdout.trim();
    for (const lib of sharedLibraries([real]).libraries) {
      const resolved = spawnSync("realpath", [lib], { encoding: "utf8" }).stdout.trim();
      expect(plan.entries.get(resolved)?.kind, resolved).toBe("file");
    }
    if (lstatSync("/bin").isSymbolicLink()) expect(plan.entries.get("/bin")).toEqual({ kind: "symlink", target: readlinkSync("/bin") });
    expect(plan.entries.get("/tmp")).toEqual({ kind: "dir", mode: 0o1777 });
    const passwd = plan.entries.get("/etc/passwd");
    expect(passwd?.kind === "text" && passwd.content).toContain("sandbox:x:1000:1000:");
    expect(plan.pythonVersion).toBeNull();
  });

  it("gives the same content key for the same host files and another one for another program set", () => {
    const a = planHostRootfs({ programs: ["sh", "sleep"] });
    const b = planHostRootfs({ programs: ["sh", "sleep"] });
    const c = planHostRootfs({ programs: ["sh", "sleep", "cat"] });
    expect(a.contentKey).toMatch(/^[0-9a-f]{64}$/);
    expect(b.contentKey).toBe(a.contentKey);
    expect(c.contentKey).not.toBe(a.contentKey);
  });

  it("refuses a host without sh: the provider needs a POSIX shell in the image", () => {
    let caught: unknown;
    try {
      planHostRootfs({ programs: ["sh"], searchDirs: [mkdtempSync(path.join(os.tmpdir(), "dfimg-empty-"))] });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SandboxError);
    expect((caught as SandboxError).code).toBe("sandbox_image_build_failed");
    expect((caught as Error).message).toContain("no sh");
  });

  it("includes Python's standard library and pip with python3, without its test suite or static library", () => {
    const plan = planHostRootfs({ programs: ["sh", "python3"] });
    expect(plan.pythonVersion).toMatch(/^3\.\d+\.\d+$/);
    const [major, minor] = plan.pythonVersion!.split(".");
    const stdlib = [...plan.entries.keys()].find((p) => p.endsWith(`/python${major}.${minor}/os.py`));
    expect(stdlib).toBeDefined();
    expect([...plan.entries.keys()].some((p) => /\/lib-dynload\/.*\.so$/.test(p))).toBe(true);
    expect([...plan.entries.keys()].some((p) => /\/python3\.\d+\/config-[^/]*\//.test(p))).toBe(false);
  });
});

describe.skipIf(process.getuid?.() !== 0)("writeRootfs (checked with chroot, as root)", () => {
  it("writes a root in which the host's sh and python3 run", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "dfimg-root-"));
    dirs.push(root);
    const plan = planHostRootfs({ programs: ["sh", "sleep", "id", "python3"] });
    writeRootfs(plan, root);
    expect(statSync(path.join(root, "tmp")).mode & 0o7777).toBe(0o1777);
    expect(readFileSync(path.join(root, "etc/group"), "utf8")).toContain("sandbox:x:1000:");
    const res = spawnSync("chroot", ["--userspec=1000:1000", root, "/bin/sh", "-c", 'python3 -c "import json, ssl; print(json.dumps(1))"; id -u'], { encoding: "utf8", timeout: 30_000 });
    expect(res.stderr).toBe("");
    expect(res.stdout.split("\n")).toEqual(["1", "1000", ""]);
  });
});
