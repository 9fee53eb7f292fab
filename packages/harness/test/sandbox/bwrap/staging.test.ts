import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planStaging, searchBlocker, STAGE_ROOT } from "../../../src/sandbox";

const nobody = { uid: 65534, gid: 65534 };
const root = mkdtempSync(path.join(os.tmpdir(), "dfstage-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("bind staging plan (sandbox uid cannot enter a directory above the data dir)", () => {
  it("finds the first directory the uid cannot enter", () => {
    chmodSync(root, 0o700);
    mkdirSync(path.join(root, "a/b"), { recursive: true });
    chmodSync(path.join(root, "a"), 0o755);
    expect(searchBlocker(path.join(root, "a/b/c"), nobody)).toBe(root);
    chmodSync(root, 0o711);
    expect(searchBlocker(path.join(root, "a/b/c"), nobody)).toBeUndefined();
    chmodSync(root, 0o700);
  });

  it("siblings under an enterable parent share one staged mount; a closed parent stages the source itself", () => {
    const userData = path.join(root, "ud");
    const closed = path.join(root, "closed");
    mkdirSync(path.join(userData, "workspace"), { recursive: true });
    mkdirSync(path.join(closed, "skills"), { recursive: true });
    chmodSync(userData, 0o755);
    chmodSync(closed, 0o700);
    const plan = planStaging(
      [
        { host: path.join(userData, "workspace"), dest: "/mnt/user-data/workspace", readOnly: false },
        { host: path.join(userData, "outputs"), dest: "/mnt/user-data/outputs", readOnly: false },
        { host: path.join(closed, "skills"), dest: "/mnt/skills", readOnly: true },
      ],
      nobody,
    );
    expect(plan.hosts).toEqual([userData, path.join(closed, "skills")]);
    expect(plan.binds.map((b) => [b.host, b.dest, b.readOnly])).toEqual([
      [`${STAGE_ROOT}/0/workspace`, "/mnt/user-data/workspace", false],
      [`${STAGE_ROOT}/0/outputs`, "/mnt/user-data/outputs", false],
      [`${STAGE_ROOT}/1`, "/mnt/skills", true],
    ]);
  });
});
