import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDescribeSkillTool, searchSkills, SkillRegistry } from "../../src/skills";
import type { Skill } from "../../src/skills";
import { buildSystemPrompt } from "../../src/agents/prompt";
import { fakeToolRuntime } from "../sandbox/helpers";
import { tempDir, writeSkill } from "./helpers";

const skill = (name: string, description: string, extra: Partial<Skill> = {}): Skill => ({
  name,
  description,
  license: null,
  category: "public",
  skillDir: `/x/${name}`,
  skillFile: `/x/${name}/SKILL.md`,
  relativePath: name,
  requiredSecrets: [],
  secretsAutonomous: true,
  enabled: true,
  ...extra,
});

describe("describe_skill (deferred discovery)", () => {
  const all = [skill("data-analysis", "Analyse spreadsheets and CSV"), skill("chart-visualization", "Make a chart from data"), skill("podcast-generation", "Generate a podcast"), skill("deep-research", "Research the web <deeply>")];

  it("query forms: select (exact, ordered, no cap), keywords (ranked), +required name term", () => {
    expect(searchSkills(all, "select:deep-research,data-analysis,nope").map((s) => s.name)).toEqual(["deep-research", "data-analysis"]);
    expect(searchSkills(all, "chart data").map((s) => s.name)).toEqual(["chart-visualization", "data-analysis"]);
    expect(searchSkills(all, "+podcast gen").map((s) => s.name)).toEqual(["podcast-generation"]);
    expect(searchSkills(all, "+podcast").map((s) => s.name)).toEqual(["podcast-generation"]);
    expect(searchSkills(all, "unrelated")).toEqual([]);
    const many = Array.from({ length: 9 }, (_, i) => skill(`s${i}`, "common words"));
    expect(searchSkills(many, "common")).toHaveLength(5);
    expect(searchSkills(many, `select:${many.map((s) => s.name).join(",")}`)).toHaveLength(9);
  });

  const root = tempDir("describe");
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("the tool lists enabled, allowed skills with escaped metadata and locations", async () => {
    writeSkill(path.join(root, "skills/public/alpha"), "name: alpha\ndescription: Alpha and more.\nallowed-tools: [read_file]");
    writeSkill(path.join(root, "skills/public/beta"), "name: beta\ndescription: Beta things.");
    fs.writeFileSync(path.join(root, "ext.json"), JSON.stringify({ skills: { beta: { enabled: false } } }));
    const registry = new SkillRegistry({ skillsPath: path.join(root, "skills"), dataDir: path.join(root, "data"), extensionsPath: path.join(root, "ext.json") });
    const t = createDescribeSkillTool({ registry });
    const out = await t.execute({ name: "select:alpha,beta" }, fakeToolRuntime("d"));
    expect(out).toBe("## Skill: alpha\n- Description: Alpha and more. [built-in]\n- Allowed tools: read_file\n- Location: /mnt/skills/public/alpha/SKILL.md");
    expect(await createDescribeSkillTool({ registry, agentSkills: [] }).execute({ name: "alpha" }, fakeToolRuntime("d"))).toBe("No skills matched: alpha");
  });

  it("the prompt shows a name-only <skill_index> instead of the full list", () => {
    const p = buildSystemPrompt({ skillIndex: ["alpha", "deep-research"], skills: [{ name: "alpha", description: "SHOULD-NOT-APPEAR", location: "/x" }] });
    expect(p).toContain("<skill_index>\nInstalled skills (names only): alpha, deep-research");
    expect(p).toContain("`describe_skill`");
    expect(p).not.toContain("SHOULD-NOT-APPEAR");
    expect(p).not.toContain("<skill_system>");
  });
});
