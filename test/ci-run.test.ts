import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const work = mkdtempSync(join(tmpdir(), "df-ci-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe(".ci/run", () => {
  it("fails before installing anything when DeerFlow's fixtures are not next to the checkout (CI never skips them silently)", () => {
    // A checkout with no ../shared beside it: only the CI script is needed, it must stop at the fixture check.
    mkdirSync(join(work, "repo", ".ci"), { recursive: true });
    copyFileSync(join(root, ".ci", "run"), join(work, "repo", ".ci", "run"));
    const r = spawnSync("bash", [join(work, "repo", ".ci", "run")], { encoding: "utf8", timeout: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("[ci] ERROR: ../shared/fixtures/deerflow/ is missing next to this checkout");
    expect(r.stdout).not.toContain("[ci] installing");
    expect(r.stdout).not.toContain("[ci] node ");
  });
});
