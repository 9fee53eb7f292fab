import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BwrapSandboxProvider, findBinary, parseSandboxConfig } from "../../../src/sandbox";
import { bwrapAvailable, tempBase } from "../helpers";

const realBwrap = findBinary("bwrap");
const run = bwrapAvailable() && realBwrap !== undefined;

describe.skipIf(!run)("the host-side command chain of a bwrap sandbox", () => {
  const base = tempBase("dfcwd-");
  afterAll(() => base.cleanup());

  it("starts in `/`, not in the server's working directory (which a custom mount could make agent-writable)", async () => {
    // A bwrap stand-in that records the directory the host-side chain (prlimit → sh → setpriv) handed it.
    const spy = path.join(base.dir, "spy");
    mkdirSync(spy, { mode: 0o777 });
    chmodSync(spy, 0o777);
    const record = path.join(spy, "cwd.txt");
    const wrapper = path.join(spy, "bwrap");
    writeFileSync(wrapper, `#!/bin/sh\npwd -P > '${record}'\nexec '${realBwrap}' "$@"\n`, { mode: 0o755 });
    const dataDir = path.join(base.dir, "data");
    mkdirSync(dataDir);
    expect(process.cwd()).not.toBe("/");
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: dataDir, bwrapPath: wrapper });
    try {
      const sandbox = provider.get(await provider.acquire("t-cwd", { userId: "default" }));
      const res = await sandbox!.executeCommand("pwd");
      expect(res.exitCode).toBe(0);
      expect(res.stdout.trim()).toBe("/mnt/user-data/workspace");
      expect(readFileSync(record, "utf8").trim()).toBe("/");
    } finally {
      await provider.shutdown();
    }
  });
});
