import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SkillValidationError, scanSkillRoot, splitSkillMarkdown, validateSkillFrontmatter, readSkillBody } from "../../src/skills";
import { tempDir, writeSkill } from "./helpers";

const FIX = path.resolve(__dirname, "../../../../../shared/fixtures/deerflow");
const FIX_PUBLIC = path.join(FIX, "skills/public");
if (!fs.existsSync(FIX)) console.warn(`[skills] SKIPPING DeerFlow fixture skills: ${FIX} is absent`);

describe.skipIf(!fs.existsSync(FIX_PUBLIC))("DeerFlow's public skills (read in place)", () => {
  // The body of a skipped describe still runs at collection: do not read the absent directory.
  const dirs = (fs.existsSync(FIX_PUBLIC) ? fs.readdirSync(FIX_PUBLIC) : []).filter((d) => fs.existsSync(path.join(FIX_PUBLIC, d, "SKILL.md")));

  it("loads every one, unchanged, with no problem", async () => {
    const scan = await scanSkillRoot(FIX_PUBLIC, "public");
    expect(scan.problems).toEqual([]);
    expect(scan.skills.map((s) => s.relativePath).sort()).toEqual(dirs.sort());
    expect(dirs.length).toBeGreaterThanOrEqual(20);
  });

  it("passes the strict install-time validation too", () => {
    for (const d of dirs) {
      const file = path.join(FIX_PUBLIC, d, "SKILL.md");
      const fm = validateSkillFrontmatter(splitSkillMarkdown(fs.readFileSync(file, "utf8"), file).metadata, file, { strict: true });
      expect(fm.name).toMatch(/^[a-z0-9-]+$/);
      expect(fm.description.length).toBeGreaterThan(10);
    }
  });

  it("keeps the directory as the package boundary (nested eval SKILL.md files are data)", async () => {
    const scan = await scanSkillRoot(FIX_PUBLIC, "public");
    const reviewer = scan.skills.find((s) => s.name === "skill-reviewer");
    expect(reviewer?.allowedTools).toEqual(["review_skill_package"]);
    expect(scan.skills.some((s) => s.relativePath.includes("evals"))).toBe(false);
  });

  it("uses the frontmatter name, not the folder name", async () => {
    const scan = await scanSkillRoot(FIX_PUBLIC, "public");
    const vercel = scan.skills.find((s) => s.relativePath === "vercel-deploy-claimable");
    expect(vercel?.name).toBe("vercel-deploy");
  });

  it("parses folded descriptions and licenses", async () => {
    const scan = await scanSkillRoot(FIX_PUBLIC, "public");
    expect(scan.skills.find((s) => s.name === "bootstrap")?.description).toMatch(/^Generate a personalized SOUL\.md/);
    expect(scan.skills.find((s) => s.name === "frontend-design")?.license).toBe("Complete terms in LICENSE.txt");
  });
});

describe("frontmatter validation", () => {
  const ok = { name: "my-skill", description: "Does things." };
  const err = (meta: Record<string, unknown>, strict = false) => {
    try {
      validateSkillFrontmatter(meta, "/x/SKILL.md", { strict });
    } catch (e) {
      expect(e).toBeInstanceOf(SkillValidationError);
      return e as SkillValidationError;
    }
    throw new Error("expected a validation error");
  };

  it("accepts the Anthropic Agent Skills format (license, allowed-tools, metadata)", () => {
    const fm = validateSkillFrontmatter({ ...ok, license: "Apache-2.0", "allowed-tools": ["read_file", "bash"], metadata: { author: "a" } }, "f", { strict: true });
    expect(fm).toMatchObject({ license: "Apache-2.0", allowedTools: ["read_file", "bash"], secretsAutonomous: true, unexpectedKeys: [] });
  });

  it("names file and key for each rule", () => {
    expect(err({ description: "d" }).details).toMatchObject({ file: "/x/SKILL.md", key: "name" });
    expect(err({ name: "x" }).message).toContain("Missing 'description'");
    expect(err({ ...ok, name: "My_Skill" }).message).toContain("hyphen-case");
    expect(err({ ...ok, name: "-a" }).message).toContain("cannot start/end with hyphen");
    expect(err({ ...ok, name: "a--b" }).message).toContain("consecutive hyphens");
    expect(err({ ...ok, name: "a".repeat(65) }).message).toContain("Maximum is 64");
    expect(validateSkillFrontmatter({ ...ok, name: "a".repeat(64) }, "f").name).toHaveLength(64);
    expect(err({ ...ok, description: "use <b>" }).details.key).toBe("description");
    expect(err({ ...ok, description: "x".repeat(1025) }).message).toContain("Maximum is 1024");
    expect(err({ ...ok, "allowed-tools": 5 }).details.key).toBe("allowed-tools");
    expect(err({ ...ok, "allowed-tools": [1] }).message).toContain("only strings");
    expect(err({ ...ok, "allowed-tools": ["  "] }).message).toContain("empty tool names");
    expect(err({ ...ok, "required-secrets": "X" }).details.key).toBe("required-secrets");
    expect(err({ ...ok, "required-secrets": ["1BAD"] }).message).toContain("not a valid environment variable name");
    expect(err({ ...ok, "secrets-autonomous": "no" }).details.key).toBe("secrets-autonomous");
  });

  it("allowed-tools: DeerFlow's list and the Agent Skills space-separated string, Claude Code names mapped", () => {
    expect(validateSkillFrontmatter({ ...ok, "allowed-tools": "Read Grep, Bash(git:*) web_search" }, "f").allowedTools).toEqual(["read_file", "grep", "bash", "web_search"]);
    expect(validateSkillFrontmatter({ ...ok, "allowed-tools": ["read_file", "Edit", "task"] }, "f").allowedTools).toEqual(["read_file", "str_replace", "task"]);
    expect(validateSkillFrontmatter({ ...ok, "allowed-tools": [] }, "f").allowedTools).toEqual([]);
  });

  it("parses required-secrets as names or {name, optional}, deduplicated", () => {
    const fm = validateSkillFrontmatter({ ...ok, "required-secrets": ["API_KEY", { name: "TOKEN", optional: true }, "API_KEY"] }, "f");
    expect(fm.requiredSecrets).toEqual([{ name: "API_KEY", optional: false }, { name: "TOKEN", optional: true }]);
  });

  it("unknown keys: an error when strict, reported otherwise", () => {
    expect(err({ ...ok, homepage: "x" }, true).message).toContain("Unexpected key(s) in SKILL.md frontmatter: homepage");
    expect(validateSkillFrontmatter({ ...ok, homepage: "x" }, "f").unexpectedKeys).toEqual(["homepage"]);
  });

  it("reports missing or broken frontmatter with the file", () => {
    expect(() => splitSkillMarkdown("# no frontmatter", "/a/SKILL.md")).toThrow(/\/a\/SKILL\.md: no YAML frontmatter/);
    expect(() => splitSkillMarkdown("---\nname: [unclosed\n---\n", "/a/SKILL.md")).toThrow(/invalid YAML in frontmatter/);
    expect(() => splitSkillMarkdown("---\n- a\n---\n", "/a/SKILL.md")).toThrow(/must be a YAML mapping/);
  });
});

describe("an Agent Skills package (Anthropic's format)", () => {
  const root = tempDir("anthropic");
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("loads with license, compatibility, metadata and string allowed-tools", async () => {
    writeSkill(
      path.join(root, "pdf-processing"),
      "name: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files.\nlicense: Complete terms in LICENSE.txt\ncompatibility: Requires python3 and pdfplumber\nmetadata:\n  author: example-org\n  version: \"1.0\"\nallowed-tools: Read Bash(python3:*) Write",
      "# PDF processing\nSee [FORMS.md](FORMS.md) and scripts/extract.py.\n",
      { "FORMS.md": "# Forms\n", "scripts/extract.py": "print('x')\n", "LICENSE.txt": "terms" },
    );
    const scan = await scanSkillRoot(root, "public");
    expect(scan.problems).toEqual([]);
    expect(scan.skills[0]).toMatchObject({ name: "pdf-processing", license: "Complete terms in LICENSE.txt", allowedTools: ["read_file", "bash", "write_file"] });
    const fm = validateSkillFrontmatter(splitSkillMarkdown(fs.readFileSync(path.join(root, "pdf-processing/SKILL.md"), "utf8")).metadata, "SKILL.md", { strict: true });
    expect(fm.name).toBe("pdf-processing");
  });
});

describe("scanning a skills root", () => {
  const root = tempDir("loader");
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("finds nested packages, skips dot folders, reports bad files without dropping good ones", async () => {
    writeSkill(path.join(root, "good"), "name: good\ndescription: A good skill.", "# Good\nbody\n");
    writeSkill(path.join(root, "group/inner"), "name: inner\ndescription: Nested in a group.\nextra-key: 1");
    writeSkill(path.join(root, "bad"), "name: Bad Name\ndescription: x");
    writeSkill(path.join(root, ".hidden"), "name: hidden\ndescription: x");
    writeSkill(path.join(root, "zdup"), "name: good\ndescription: Same name.");
    const scan = await scanSkillRoot(root, "custom");
    expect(scan.skills.map((s) => `${s.name}@${s.relativePath}`)).toEqual(["good@good", "inner@group/inner"]);
    const errors = scan.problems.filter((p) => p.severity === "error");
    expect(errors.map((p) => [path.relative(root, p.file), p.key])).toEqual([
      ["bad/SKILL.md", "name"],
      ["zdup/SKILL.md", "name"],
    ]);
    expect(scan.problems.find((p) => p.severity === "warning")?.message).toContain("extra-key");
    expect(await readSkillBody(scan.skills[0]!)).toBe("# Good\nbody");
  });

  it("an absent root is empty", async () => {
    expect(await scanSkillRoot(path.join(root, "nope"), "public")).toEqual({ skills: [], problems: [] });
  });

  it("re-reads a SKILL.md whose file changed, even with the same size and a restored mtime", async () => {
    const dir = writeSkill(path.join(root, "edit", "one"), "name: one\ndescription: First text.");
    const file = path.join(dir, "SKILL.md");
    fs.utimesSync(file, 1_000_000, 1_000_000); // whole seconds, so the same mtime can be set again exactly
    expect((await scanSkillRoot(path.join(root, "edit"), "custom")).skills[0]?.description).toBe("First text.");
    const before = fs.statSync(file);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("First", "Other"));
    fs.utimesSync(file, 1_000_000, 1_000_000); // an editor or copy tool that keeps the timestamp
    const after = fs.statSync(file);
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
    expect((await scanSkillRoot(path.join(root, "edit"), "custom")).skills[0]?.description).toBe("Other text.");
    // Replaced by rename (a new file at the same path), as atomic writers do.
    fs.writeFileSync(`${file}.tmp`, "---\nname: one\ndescription: Renamed in.\n---\n# x\n");
    fs.renameSync(`${file}.tmp`, file);
    expect((await scanSkillRoot(path.join(root, "edit"), "custom")).skills[0]?.description).toBe("Renamed in.");
  });

  it("reports a broken SKILL.md on every scan until it is fixed, then loads it", async () => {
    const dir = writeSkill(path.join(root, "fix", "two"), "name: two\ndescription: [unclosed");
    const scan = () => scanSkillRoot(path.join(root, "fix"), "custom");
    for (let i = 0; i < 2; i++) {
      const s = await scan();
      expect(s.skills).toEqual([]);
      expect(s.problems.map((p) => p.severity)).toEqual(["error"]);
    }
    writeSkill(dir, "name: two\ndescription: Fixed.");
    const fixed = await scan();
    expect(fixed.problems).toEqual([]);
    expect(fixed.skills.map((s) => s.description)).toEqual(["Fixed."]);
  });
});
