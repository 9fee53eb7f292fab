import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempDir } from "./helpers";

describe("deerflow skills (real CLI process)", () => {
  const cwd = tempDir("df-cli-skills-");
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));
  const skill = (dir: string, name: string, desc: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${desc}\n---\n# ${name}\nbody\n`);
  };
  skill(path.join(cwd, "skills/public/alpha"), "alpha", "The alpha skill.");
  skill(path.join(cwd, "src-skill"), "folder-skill", "Installed from a folder.");
  mkdirSync(path.join(cwd, "src-skill/scripts"), { recursive: true });
  writeFileSync(path.join(cwd, "src-skill/scripts/run.sh"), "#!/bin/sh\necho ok\n", { mode: 0o755 });
  const cli = (...args: string[]) => runCli(["skills", ...args], { cwd, env: cleanEnv() });

  it("lists, installs a folder, toggles, shows, deletes", async () => {
    let r = await cli("list");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/alpha\s+public\s+enabled\s+The alpha skill\./);

    r = await cli("install", "src-skill");
    expect([r.code, r.stdout.trim()]).toEqual([0, "Skill 'folder-skill' installed successfully"]);
    expect(existsSync(path.join(cwd, ".deer-flow/users/default/skills/custom/folder-skill/scripts/run.sh"))).toBe(true);

    r = await cli("disable", "alpha");
    expect(r.stdout.trim()).toBe("Skill 'alpha' (public) is now disabled.");
    expect(JSON.parse(readFileSync(path.join(cwd, "extensions_config.json"), "utf8")).skills).toEqual({ alpha: { enabled: false } });

    r = await cli("list", "--json");
    expect(JSON.parse(r.stdout).skills.map((s: { name: string; enabled: boolean; category: string }) => [s.name, s.category, s.enabled])).toEqual([
      ["alpha", "public", false],
      ["folder-skill", "custom", true],
    ]);
    r = await cli("delete", "folder-skill");
    expect(r.stdout.trim()).toBe("Deleted custom skill 'folder-skill'.");
    r = await cli("delete", "alpha");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not a custom skill");
  });
});
