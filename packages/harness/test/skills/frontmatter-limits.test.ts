import fs from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import { afterAll, describe, expect, it } from "vitest";
import { FRONTMATTER_LIMITS, installSkillArchive, splitSkillMarkdown, SkillValidationError } from "../../src/skills";
import { tempDir } from "./helpers";

const root = tempDir("fm-limits");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const enc = (s: string) => new TextEncoder().encode(s);

/** A SKILL.md whose frontmatter carries `keys` extra keys (the reported attack had 100,000). */
function wideSkill(keys: number): string {
  const extra = Array.from({ length: keys }, (_, i) => `k${i}: v`).join("\n");
  return `---\nname: wide\ndescription: Too many keys.\n${extra}\n---\n# Wide\n`;
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("SKILL.md frontmatter limits", () => {
  it("refuses a 100,000-key frontmatter in the installer in well under a second, naming the file and the limit", async () => {
    const file = path.join(root, "wide.skill");
    fs.writeFileSync(file, zipSync({ "wide/SKILL.md": enc(wideSkill(100_000)) }));
    const customRoot = path.join(root, "u1", "skills", "custom");
    const t0 = performance.now();
    const err = await installSkillArchive(file, { customRoot, exists: async () => false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(SkillValidationError);
    expect((err as Error).message).toMatch(/^SKILL\.md: frontmatter is \d+ bytes, over the limit of 65536 bytes$/);
    expect((err as SkillValidationError).details).toMatchObject({ file: "SKILL.md", limit: "max_bytes", max: 65536 });
    expect(elapsed).toBeLessThan(1000);
    expect(fs.readdirSync(customRoot)).toEqual([]);
  });

  it("refuses a frontmatter under the byte limit with more keys than the node limit", () => {
    const text = wideSkill(5000);
    expect(Buffer.byteLength(text)).toBeLessThan(FRONTMATTER_LIMITS.maxBytes);
    const err = caught(() => splitSkillMarkdown(text, "skills/custom/wide/SKILL.md"));
    expect(err).toBeInstanceOf(SkillValidationError);
    expect((err as Error).message).toBe("skills/custom/wide/SKILL.md: frontmatter has more than 1000 keys/values (the limit); refusing to parse it");
  });

  it("refuses keys packed into one flow mapping the same way", () => {
    const flow = `{${Array.from({ length: 3000 }, (_, i) => `k${i}: ${i}`).join(", ")}}`;
    const err = caught(() => splitSkillMarkdown(`---\nname: flow\ndescription: Flow.\nmetadata: ${flow}\n---\n`, "SKILL.md"));
    expect((err as SkillValidationError).details).toMatchObject({ limit: "max_nodes" });
  });

  it("finds the closing fence in linear time when a huge file has none", () => {
    const t0 = performance.now();
    const err = caught(() => splitSkillMarkdown(`---\nname: x\n${"y: z\n".repeat(400_000)}`, "SKILL.md"));
    expect((err as Error).message).toMatch(/no YAML frontmatter found/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("keeps ordinary frontmatters (metadata maps, lists, aliases) working", () => {
    const { metadata, body } = splitSkillMarkdown("---\nname: ok\ndescription: Fine.\nallowed-tools: [bash, read_file]\nmetadata: &m {author: me}\ncompatibility: *m\n---\n# Body\n");
    expect(metadata).toEqual({ name: "ok", description: "Fine.", "allowed-tools": ["bash", "read_file"], metadata: { author: "me" }, compatibility: { author: "me" } });
    expect(body).toBe("# Body\n");
  });
});
