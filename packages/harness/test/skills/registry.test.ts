import fs from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLED_SKILLS_PATH, resolveSkillsPath, SkillRegistry, skillsViewDir } from "../../src/skills";
import { tempDir, writeSkill } from "./helpers";

const root = tempDir("registry");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function setup(name: string) {
  const base = path.join(root, name);
  const skillsPath = path.join(base, "skills");
  writeSkill(path.join(skillsPath, "public/alpha"), "name: alpha\ndescription: First public skill.", "# Alpha\nUse scripts/a.sh\n", { "scripts/a.sh": "echo alpha\n" });
  writeSkill(path.join(skillsPath, "public/beta"), "name: beta\ndescription: Second public skill.\nallowed-tools: [read_file]");
  const extensionsPath = path.join(base, "extensions_config.json");
  fs.writeFileSync(extensionsPath, JSON.stringify({ mcpServers: { keep: { enabled: false } }, skills: { beta: { enabled: false } } }));
  const dataDir = path.join(base, "data");
  const registry = new SkillRegistry({ skillsPath, dataDir, extensionsPath });
  return { base, skillsPath, dataDir, extensionsPath, registry };
}

describe("SkillRegistry", () => {
  it("lists skills with their enabled state from extensions_config.json", async () => {
    const { registry } = setup("list");
    const list = await registry.list("u1");
    expect(list.map((s) => [s.name, s.category, s.enabled])).toEqual([
      ["alpha", "public", true],
      ["beta", "public", false],
    ]);
    expect(list[1]?.allowedTools).toEqual(["read_file"]);
  });

  it("prompt skills: enabled ones with container paths, disabled apart, agent allowlist applied, byte-stable", async () => {
    const { registry } = setup("prompt");
    const a = await registry.promptSkills("u1");
    expect(a).toEqual({
      skills: [{ name: "alpha", description: "First public skill.", location: "/mnt/skills/public/alpha/SKILL.md" }],
      disabledSkills: ["beta"],
    });
    expect(JSON.stringify(await registry.promptSkills("u1"))).toBe(JSON.stringify(a));
    expect(await registry.promptSkills("u1", [])).toEqual({ skills: [], disabledSkills: [] });
    expect((await registry.promptSkills("u1", ["beta"])).skills).toEqual([]);
  });

  it("enabling a public skill rewrites extensions_config.json atomically, keeping other keys", async () => {
    const { registry, extensionsPath } = setup("toggle");
    const s = await registry.setEnabled("beta", true, "u1");
    expect(s.enabled).toBe(true);
    const doc = JSON.parse(fs.readFileSync(extensionsPath, "utf8"));
    expect(doc).toEqual({ mcpServers: { keep: { enabled: false } }, skills: { beta: { enabled: true } } });
    expect(fs.readdirSync(path.dirname(extensionsPath)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    await registry.setEnabled("alpha", false, "u2");
    expect((await registry.list("u1")).find((x) => x.name === "alpha")?.enabled).toBe(false);
    await expect(registry.setEnabled("nope", true, "u1")).rejects.toThrow("Skill 'nope' not found");
  });

  it("custom skills are per user: install, toggle and delete do not leak across users", async () => {
    const { registry, base, dataDir } = setup("custom");
    const file = path.join(base, "mine.skill");
    fs.writeFileSync(file, zipSync({ "mine/SKILL.md": new TextEncoder().encode("---\nname: mine\ndescription: My own skill.\n---\nbody\n") }));
    await registry.install(file, "u1");
    expect((await registry.list("u1")).find((s) => s.name === "mine")).toMatchObject({ category: "custom", enabled: true });
    expect((await registry.list("u2")).some((s) => s.name === "mine")).toBe(false);
    await expect(registry.install(file, "u1")).rejects.toThrow("Skill 'mine' already exists");

    await registry.setEnabled("mine", false, "u1");
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, "users/u1/skills/_skill_states.json"), "utf8"))).toEqual({ mine: { enabled: false } });
    expect((await registry.get("mine", "u1"))?.enabled).toBe(false);

    await expect(registry.deleteCustom("alpha", "u1")).rejects.toThrow("not a custom skill");
    await registry.deleteCustom("mine", "u1");
    expect(await registry.get("mine", "u1")).toBeUndefined();
    await expect(registry.deleteCustom("mine", "u1")).rejects.toThrow("Custom skill 'mine' not found");
  });

  it("the sandbox view holds enabled skills only, as read-only copies", async () => {
    const { registry, dataDir, skillsPath } = setup("view");
    const view = await registry.ensureView("u1");
    expect(view).toBe(skillsViewDir(dataDir, "u1"));
    expect(fs.readdirSync(path.join(view, "public"))).toEqual(["alpha"]);
    const copy = path.join(view, "public/alpha/SKILL.md");
    expect(fs.statSync(copy).mode & 0o222).toBe(0);
    expect(fs.statSync(copy).ino).not.toBe(fs.statSync(path.join(skillsPath, "public/alpha/SKILL.md")).ino);
    expect(registry.mountPoints("u1")).toEqual([{ virtual: "/mnt/skills", host: view, readOnly: true }]);

    // Unchanged inputs: the view is left alone (same inode).
    const ino = fs.statSync(copy).ino;
    await registry.ensureView("u1");
    expect(fs.statSync(copy).ino).toBe(ino);

    await registry.setEnabled("beta", true, "u1");
    expect(fs.readdirSync(path.join(view, "public")).sort()).toEqual(["alpha", "beta"]);
    await registry.setEnabled("alpha", false, "u1");
    expect(fs.readdirSync(path.join(view, "public"))).toEqual(["beta"]);
  });

  it("maps container paths to disabled skills", async () => {
    const { registry } = setup("paths");
    expect(await registry.isDisabledPath("/mnt/skills/public/beta/SKILL.md", "u1")).toBe("beta");
    expect(await registry.isDisabledPath("/mnt/skills/public/beta", "u1")).toBe("beta");
    expect(await registry.isDisabledPath("/mnt/skills/public/alpha/SKILL.md", "u1")).toBeUndefined();
    expect(await registry.isDisabledPath("/mnt/skills/public/betamax/x", "u1")).toBeUndefined();
    expect(await registry.isDisabledPath("/mnt/user-data/workspace/beta", "u1")).toBeUndefined();
  });

  it("reads a skill body without its frontmatter", async () => {
    const { registry } = setup("body");
    expect(await registry.readBody("alpha", "u1")).toBe("# Alpha\nUse scripts/a.sh");
  });
});

describe("skills path resolution", () => {
  it("skills.path → DEER_FLOW_SKILLS_PATH → {projectRoot}/skills when it exists → the bundled skills", () => {
    expect(resolveSkillsPath("my-skills", "/proj", {})).toBe("/proj/my-skills");
    expect(resolveSkillsPath("/abs", "/proj", { DEER_FLOW_SKILLS_PATH: "/env" })).toBe("/abs");
    expect(resolveSkillsPath(null, "/proj", { DEER_FLOW_SKILLS_PATH: "/env" })).toBe("/env");
    const withSkills = tempDir("proj");
    fs.mkdirSync(path.join(withSkills, "skills"));
    expect(resolveSkillsPath(undefined, withSkills, {})).toBe(path.join(withSkills, "skills"));
    // A project without a skills folder (a user's own directory) gets the public skills this package ships.
    const bare = resolveSkillsPath(undefined, tempDir("proj"), {});
    expect(bare).toBe(BUNDLED_SKILLS_PATH);
    expect(fs.existsSync(path.join(bare, "public", "deep-research", "SKILL.md"))).toBe(true);
  });

  it("fromConfig reads skills.path and skills.container_path", () => {
    const r = SkillRegistry.fromConfig(
      { skills: { use: "x", path: "sk", container_path: "/opt/skills", deferred_discovery: false }, extensions: { mcpServers: {}, skills: {}, middlewares: [] } },
      { dataDir: "/d", projectRoot: "/p", env: {} },
    );
    expect([r.skillsPath, r.containerPath, r.dataDir]).toEqual(["/p/sk", "/opt/skills", "/d"]);
  });
});

const FIX_SKILLS = path.resolve(__dirname, "../../../../../shared/fixtures/deerflow/skills");
if (!fs.existsSync(path.join(FIX_SKILLS, "public"))) console.warn(`[skills] SKIPPING DeerFlow's public skills through the registry: ${FIX_SKILLS} is absent`);
describe.skipIf(!fs.existsSync(path.join(FIX_SKILLS, "public")))("DeerFlow's public skills through the registry (read in place)", () => {
  function tree(dir: string, rel = ""): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) Object.assign(out, tree(dir, r));
      else if (e.isFile()) out[r] = fs.readFileSync(path.join(dir, r)).toString("base64");
    }
    return out;
  }

  it("all list as enabled public skills and mount byte-identical into the view", async () => {
    const dataDir = path.join(root, "fixture-data");
    const registry = new SkillRegistry({ skillsPath: FIX_SKILLS, dataDir, extensionsPath: null, projectRoot: root });
    const list = await registry.list("default");
    const dirs = fs.readdirSync(path.join(FIX_SKILLS, "public")).filter((d) => fs.existsSync(path.join(FIX_SKILLS, "public", d, "SKILL.md")));
    expect(list.filter((s) => s.category === "public" && s.enabled)).toHaveLength(dirs.length);
    const view = await registry.ensureView("default");
    for (const d of dirs) expect(tree(path.join(view, "public", d)), d).toEqual(tree(path.join(FIX_SKILLS, "public", d)));
    const prompt = await registry.promptSkills("default");
    expect(prompt.skills.map((s) => s.location)).toContain("/mnt/skills/public/vercel-deploy-claimable/SKILL.md");
  });
});
