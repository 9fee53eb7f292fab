/**
 * The LLM content review of `.skill` installs (`skill_evolution.moderation_model_name`):
 * verdicts from a ScriptedModel moderation model, fail-closed / fail-open on a useless
 * answer, no model call without a configured model, and the wiring through
 * `SkillRegistry.fromConfig` (CLI, gateway fallback) and `DeerFlowRuntime` (attachSkills).
 */
import fs from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import type { Zippable } from "fflate";
import { afterAll, describe, expect, it } from "vitest";
import { loadAppConfig } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { contentText } from "../../src/messages";
import { buildReviewPrompt, collectReviewMaterial, parseReviewVerdict, SkillInstallError, SkillRegistry } from "../../src/skills";
import type { SkillModelFactory } from "../../src/skills";
import { ScriptedModel } from "../../src/testing";
import { tempDir } from "./helpers";

const root = tempDir("review");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const enc = (s: string) => new TextEncoder().encode(s);
const SKILL_MD = (name: string) => `---\nname: ${name}\ndescription: A skill under review.\n---\n# ${name}\nSummarise the user's notes.\n`;
let n = 0;

function archive(files: Zippable): string {
  const file = path.join(root, `p${n++}.skill`);
  fs.writeFileSync(file, zipSync(files));
  return file;
}
const docsOnly = (name: string) => archive({ [`${name}/SKILL.md`]: enc(SKILL_MD(name)), [`${name}/references/guide.md`]: enc("# Guide\n") });
const withScript = (name: string) => archive({ [`${name}/SKILL.md`]: enc(SKILL_MD(name)), [`${name}/scripts/run.py`]: enc("print('summary')\n") });

function configYaml(evolution: string[]): string {
  return ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "  - { name: judge, use: openai-compatible, model: y, base_url: http://127.0.0.1:9/v1, api_key: k }", ...evolution, ""].join("\n");
}

/** A registry built like the CLI builds it (config file → `SkillRegistry.fromConfig`), whose model factory hands out `model` and records the names asked for. */
function registryWith(evolution: string[], model: ScriptedModel): { registry: SkillRegistry; asked: string[]; dataDir: string; logs: string[] } {
  const asked: string[] = [];
  const logs: string[] = [];
  const factory: SkillModelFactory = (_cfg, name, opts) => {
    asked.push(`${name}:${String(opts.thinkingEnabled)}`);
    return { model, warnings: [], config: { name: name ?? "m1" } as never };
  };
  const dataDir = path.join(root, `data${n++}`);
  const skillsPath = path.join(root, `skills${n++}`);
  fs.mkdirSync(path.join(skillsPath, "public"), { recursive: true });
  const file = path.join(root, `config${n++}.yaml`);
  fs.writeFileSync(file, configYaml([...evolution, "skills:", `  path: ${skillsPath}`]));
  const { config } = loadAppConfig({ path: file, cwd: root, env: {}, logger: { warn: () => undefined, info: () => undefined } });
  return { registry: SkillRegistry.fromConfig(config, { dataDir, projectRoot: root, modelFactory: factory, log: (m) => logs.push(m) }), asked, dataDir, logs };
}

async function refusal(p: Promise<unknown>): Promise<SkillInstallError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SkillInstallError);
  expect((err as SkillInstallError).code).toBe("skill_install_rejected");
  return err as SkillInstallError;
}

function installedNames(registry: SkillRegistry): string[] {
  const dir = registry.customRoot("default");
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

const MODERATED = ["skill_evolution:", "  moderation_model_name: judge"];

describe("skill content review", () => {
  it("allow: the package is installed after the moderation model saw SKILL.md and the script", async () => {
    const model = new ScriptedModel(['Looks fine.\n```json\n{"verdict": "allow", "reasons": []}\n```']);
    const { registry, asked } = registryWith(MODERATED, model);
    const res = await registry.install(withScript("ok-skill"), "default");
    expect(res.skill_name).toBe("ok-skill");
    expect(installedNames(registry)).toEqual(["ok-skill"]);
    expect(model.callCount).toBe(1);
    expect(asked).toEqual(["judge:false"]);
    const [system, user] = model.lastRequest!.messages.map((m) => contentText(m.content));
    expect(system).toContain('{"verdict": "allow" | "block"');
    expect(system).toContain("stricter review");
    expect(user).toContain("===== FILE: SKILL.md =====");
    expect(user).toContain("===== FILE: scripts/run.py =====\nprint('summary')");
    expect(user).toContain("contains scripts or executable files");
    model.assertComplete();
  });

  it("block: refused with the reasons, nothing written", async () => {
    const model = new ScriptedModel(['{"verdict":"block","reasons":["uploads ~/.aws to a remote host","hides a payload in base64"]}']);
    const { registry } = registryWith(MODERATED, model);
    const err = await refusal(registry.install(withScript("bad-skill"), "default"));
    expect(err.message).toBe("Security review blocked skill 'bad-skill': uploads ~/.aws to a remote host; hides a payload in base64");
    expect(err.details).toMatchObject({ skill_name: "bad-skill", reasons: ["uploads ~/.aws to a remote host", "hides a payload in base64"] });
    expect(installedNames(registry)).toEqual([]);
    expect(fs.readdirSync(path.dirname(registry.customRoot("default"))).filter((e) => e.startsWith(".install-"))).toEqual([]);
  });

  it("a static-scan block never reaches the moderation model", async () => {
    const model = new ScriptedModel([]);
    const { registry } = registryWith(MODERATED, model);
    const evil = archive({ "SKILL.md": enc(SKILL_MD("evil-skill")), "scripts/x.py": enc("import os\nos.system('id')\n") });
    expect((await refusal(registry.install(evil, "default"))).message).toContain("Static security scan blocked");
    expect(model.callCount).toBe(0);
  });

  it("garbage answer, fail-closed (default): refused, saying the model could not review it", async () => {
    const model = new ScriptedModel(["I think it is probably fine, maybe?"]);
    const { registry } = registryWith(MODERATED, model);
    const err = await refusal(registry.install(docsOnly("docs-skill"), "default"));
    expect(err.message).toMatch(/^The moderation model could not review skill 'docs-skill' \(its answer was not a valid JSON verdict\); the install was refused because security_fail_closed is on\.$/);
    expect(installedNames(registry)).toEqual([]);
  });

  it("model error, fail-closed: refused", async () => {
    const model = new ScriptedModel([{ error: { kind: "server", message: "upstream 503" } }]);
    const { registry } = registryWith(MODERATED, model);
    expect((await refusal(registry.install(docsOnly("docs-skill"), "default"))).message).toContain("could not review skill 'docs-skill'");
  });

  it("garbage answer, fail-open: a package without scripts installs with a warning; one with a script is still refused", async () => {
    const model = new ScriptedModel(["no idea", '{"verdict": "maybe"}']);
    const { registry, logs } = registryWith([...MODERATED, "  security_fail_closed: false"], model);
    expect((await registry.install(docsOnly("docs-skill"), "default")).skill_name).toBe("docs-skill");
    expect(logs.join("\n")).toContain("installed without review because security_fail_closed is off");
    const err = await refusal(registry.install(withScript("script-skill"), "default"));
    expect(err.message).toContain("the package contains scripts or executables");
    expect(installedNames(registry)).toEqual(["docs-skill"]);
    model.assertComplete();
  });

  it("no moderation_model_name: no model call, installs as before", async () => {
    for (const evolution of [[], ["skill_evolution:", "  enabled: true", "  moderation_model_name: null"]]) {
      const model = new ScriptedModel(['{"verdict":"block","reasons":["must not be asked"]}']);
      const { registry, asked } = registryWith(evolution, model);
      expect((await registry.install(withScript(`plain-${n}`), "default")).success).toBe(true);
      expect(model.callCount).toBe(0);
      expect(asked).toEqual([]);
    }
  });

  it("DeerFlowRuntime wires the review into its registry (attachSkills, runtime modelFactory)", async () => {
    const dir = path.join(root, `rt${n++}`);
    fs.mkdirSync(path.join(dir, "skills/public"), { recursive: true });
    fs.writeFileSync(path.join(dir, "config.yaml"), configYaml([...MODERATED, "database:", "  backend: memory"]));
    const judge = new ScriptedModel(['{"verdict":"block","reasons":["opens a reverse tunnel"]}']);
    const names: Array<string | null | undefined> = [];
    const rt = await DeerFlowRuntime.open({
      configPath: path.join(dir, "config.yaml"),
      cwd: dir,
      dataDir: path.join(dir, "data"),
      log: () => undefined,
      modelFactory: (_c, name) => {
        names.push(name);
        return { model: judge, warnings: [], config: { name: "judge" } as never };
      },
    });
    try {
      const err = await refusal(rt.extensions.skills!.install(withScript("tunnel-skill"), "default"));
      expect(err.message).toContain("opens a reverse tunnel");
      expect(names).toEqual(["judge"]);
    } finally {
      await rt.close();
    }
  });
});

describe("review material and verdict parsing", () => {
  it("caps the content and says what was truncated or left out", async () => {
    const dir = path.join(root, `big${n++}`);
    fs.mkdirSync(path.join(dir, "scripts"), { recursive: true });
    fs.writeFileSync(path.join(dir, "SKILL.md"), SKILL_MD("big"));
    fs.writeFileSync(path.join(dir, "scripts/a.sh"), `#!/bin/sh\n${"echo a\n".repeat(100)}`);
    fs.writeFileSync(path.join(dir, "scripts/b.py"), "print(1)\n");
    fs.writeFileSync(path.join(dir, "notes.md"), "not code\n");
    const m = await collectReviewMaterial(dir, SKILL_MD("big").length + 50);
    expect(m.hasExecutables).toBe(true);
    expect(m.files.map((f) => [f.rel, f.truncated])).toEqual([["SKILL.md", false], ["scripts/a.sh", true]]);
    expect(m.files[1]!.text).toHaveLength(50);
    expect(m.omitted).toEqual(["scripts/b.py"]);
    const prompt = buildReviewPrompt("big", m, 123);
    expect(prompt.user).toContain("limited to 123 characters. Truncated: scripts/a.sh. Not shown at all: scripts/b.py.");
    expect(prompt.user).not.toContain("notes.md");
  });

  it("finds the verdict in plain JSON, fences and prose; rejects anything else", () => {
    expect(parseReviewVerdict('{"verdict":"allow","reasons":[]}')).toEqual({ verdict: "allow", reasons: [] });
    expect(parseReviewVerdict('```\n{"verdict": "BLOCK", "reasons": "steals keys"}\n```')).toEqual({ verdict: "block", reasons: ["steals keys"] });
    expect(parseReviewVerdict('Verdict follows: {"verdict": "block", "reasons": ["uses {curly} braces"]} — that is all {really}.')).toEqual({ verdict: "block", reasons: ["uses {curly} braces"] });
    expect(parseReviewVerdict('{"verdict":"allow"}')).toEqual({ verdict: "allow", reasons: [] });
    expect(parseReviewVerdict('{"verdict":"perhaps","reasons":[]}')).toBeUndefined();
    expect(parseReviewVerdict("allow")).toBeUndefined();
    expect(parseReviewVerdict("")).toBeUndefined();
  });
});
