/** The public skills shipped in this repository (`skills/public/`): they load, pass the install checks, and their scripts work. */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BwrapSandboxProvider, parseSandboxConfig } from "../../src/sandbox";
import { scanSkillDir, scanSkillRoot, SkillRegistry, skillsViewDir, splitSkillMarkdown, validateSkillFrontmatter } from "../../src/skills";
import { bwrapAvailable, tempBase } from "../sandbox/helpers";
import { tempDir } from "./helpers";

const PUBLIC = path.resolve(__dirname, "../../../../skills/public");
const BUNDLED = ["deep-research", "in-depth-researcher", "quick-searcher", "recursive-summarizer"];
const HAS_PYTHON = spawnSync("python3", ["--version"]).status === 0;
if (!HAS_PYTHON) console.warn("[skills] SKIPPING bundled skill script tests: python3 is not installed");
const tmp = tempDir("bundled");
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function py(script: string, args: string[]): { code: number | null; out: string } {
  const r = spawnSync("python3", [path.join(PUBLIC, script), ...args], { encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("bundled public skills", () => {
  it("all load without problems and pass strict validation and the static scan", async () => {
    const scan = await scanSkillRoot(PUBLIC, "public");
    expect(scan.problems).toEqual([]);
    expect(scan.skills.map((s) => s.name).sort()).toEqual(BUNDLED);
    for (const s of scan.skills) {
      validateSkillFrontmatter(splitSkillMarkdown(fs.readFileSync(s.skillFile, "utf8")).metadata, s.skillFile, { strict: true });
      expect((await scanSkillDir(s.skillDir)).filter((f) => f.severity !== "MEDIUM"), s.name).toEqual([]);
    }
  });

  it("every file a SKILL.md references exists in its package", () => {
    for (const name of BUNDLED) {
      const dir = path.join(PUBLIC, name);
      const body = fs.readFileSync(path.join(dir, "SKILL.md"), "utf8");
      const refs = [...body.matchAll(/`((?:scripts|references|templates)\/[\w./-]+)`/g), ...body.matchAll(/\/mnt\/skills\/public\/([\w-]+)\/((?:scripts|references|templates)\/[\w./-]+)/g)];
      for (const m of refs) {
        const rel = m[2] ? path.join(PUBLIC, m[1]!, m[2]) : path.join(dir, m[1]!);
        expect(fs.existsSync(rel), `${name} references ${rel}`).toBe(true);
      }
    }
  });
});

describe.skipIf(!HAS_PYTHON)("bundled skill scripts", () => {
  it("deep-research check_citations.py: clean report passes, broken one is reported", () => {
    const good = path.join(tmp, "good.md");
    fs.writeFileSync(good, "# T\n\nTea output was 6.5 million tonnes in 2021 [citation:FAO](https://www.fao.org/tea).\n\n## Sources\n\n- [FAO](https://fao.org/tea/)\n");
    expect(py("deep-research/scripts/check_citations.py", [good])).toMatchObject({ code: 0 });
    const bad = path.join(tmp, "bad.md");
    fs.writeFileSync(
      bad,
      "# T\n\nGlobal tea output reached 6.5 million tonnes in 2021 and kept growing quickly across producers.\n\nSee [citation:Wiki](https://en.wikipedia.org/wiki/Tea) and [citation:Local](file:///etc/passwd).\n\n## Sources\n\n- [Other](https://example.com/x)\n- [Other](https://example.com/x)\n",
    );
    const r = py("deep-research/scripts/check_citations.py", [bad, "--json"]);
    expect(r.code).toBe(1);
    const kinds = (JSON.parse(r.out) as { problems: Array<{ kind: string }> }).problems.map((p) => p.kind).sort();
    expect(kinds).toEqual(["bad_url", "duplicate_source", "missing_from_sources", "missing_from_sources", "uncited_number", "unused_source"]);
  });

  it("recursive-summarizer chunk_text.py: chunks cover the text exactly, respect the limit, prefer headings", () => {
    const text = Array.from({ length: 6 }, (_, h) => `## Part ${h}\n\n${Array.from({ length: 6 }, (_, p) => `Paragraph ${h}.${p} ${"lorem ipsum dolor sit amet ".repeat(12)}end.`).join("\n\n")}`).join("\n\n");
    const input = path.join(tmp, "long.md");
    fs.writeFileSync(input, text);
    const out = path.join(tmp, "chunks");
    const r = py("recursive-summarizer/scripts/chunk_text.py", [input, "--out", out, "--max-chars", "3000"]);
    expect(r.code, r.out).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as { total_chars: number; chunks: Array<{ file: string; start: number; end: number; chars: number; heading: string }> };
    expect(manifest.total_chars).toBe(text.length);
    expect(manifest.chunks.map((c) => fs.readFileSync(path.join(out, c.file), "utf8")).join("")).toBe(text);
    for (const c of manifest.chunks) {
      expect(c.chars).toBeLessThanOrEqual(3000);
      expect(text.slice(c.start, c.end)).toBe(fs.readFileSync(path.join(out, c.file), "utf8"));
    }
    expect(manifest.chunks.filter((c) => text.slice(c.start).startsWith("## Part")).length).toBeGreaterThanOrEqual(4);
    expect(manifest.chunks.every((c, i) => i === 0 || /[.\n]\s*$/.test(text.slice(0, c.start)))).toBe(true);
    expect(py("recursive-summarizer/scripts/chunk_text.py", [input, "--out", out, "--max-chars", "10"]).code).toBe(2);
  });

  it("in-depth-researcher evidence_matrix.py: finds gaps, contradictions and matrix problems", () => {
    const file = path.join(tmp, "evidence.json");
    const ev = (question_id: string, url: string, stance = "supports") => ({ question_id, claim: "c", source_title: "t", source_url: url, stance, date: "2026-01-01" });
    fs.writeFileSync(
      file,
      JSON.stringify({
        questions: [
          { id: "q1", question: "covered" },
          { id: "q2", question: "one domain" },
          { id: "q3", question: "contested" },
          { id: "q4", question: "empty" },
        ],
        evidence: [ev("q1", "https://a.org/x"), ev("q1", "https://b.com/y"), ev("q2", "https://news.c.co.uk/1"), ev("q2", "https://www.c.co.uk/2"), ev("q3", "https://d.org"), ev("q3", "https://e.org", "contradicts"), ev("q9", "ftp://x", "maybe")],
      }),
    );
    const r = py("in-depth-researcher/scripts/evidence_matrix.py", [file, "--json"]);
    expect(r.code).toBe(1);
    const res = JSON.parse(r.out) as { rows: Array<{ id: string; gaps: string[]; domains: string[] }>; issues: string[] };
    expect(res.rows.map((x) => [x.id, x.gaps])).toEqual([
      ["q1", []],
      ["q2", ["only 1 independent domain(s)"]],
      ["q3", ["1 contradicting claim(s) to resolve"]],
      ["q4", ["no evidence yet"]],
    ]);
    expect(res.issues).toHaveLength(3);
    expect(py("in-depth-researcher/scripts/evidence_matrix.py", [file]).out).toContain("Gaps to research next:");
  });
});

describe.skipIf(!bwrapAvailable() || !fs.existsSync("/usr/bin/python3"))("bundled scripts inside the bubblewrap sandbox", () => {
  it("runs from the read-only /mnt/skills view on a workspace file, as the SKILL.md instructs", async () => {
    const base = tempBase("dfbundled-");
    try {
      const registry = new SkillRegistry({ skillsPath: path.dirname(PUBLIC), dataDir: path.join(base.dir, "data"), extensionsPath: null, projectRoot: base.dir });
      await registry.ensureView("default");
      const provider = new BwrapSandboxProvider(parseSandboxConfig({}), { baseDir: path.join(base.dir, "data"), skillsPath: (u) => skillsViewDir(path.join(base.dir, "data"), u) });
      const sb = provider.get(await provider.acquire("bundled"))!;
      await sb.writeFile("/mnt/user-data/workspace/report.md", "# R\n\nA claim [citation:Src](https://example.org/a).\n\n## Sources\n\n- [Src](https://example.org/a)\n");
      const res = await sb.executeCommand("python3 /mnt/skills/public/deep-research/scripts/check_citations.py /mnt/user-data/workspace/report.md");
      expect([res.exitCode, res.stdout]).toEqual([0, "1 cited URL(s), 1 source(s), 0 problem(s)\n  OK: every citation is listed and every source is used.\n"]);
      await provider.shutdown();
    } finally {
      base.cleanup();
    }
  });
});
