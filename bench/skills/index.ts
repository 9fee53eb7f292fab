/**
 * Skills: cost of what runs per request and per run.
 * - discovery: scan + parse + validate every SKILL.md (DeerFlow's 23 public
 *   skills when ../shared is present, else this repo's skills/public),
 *   against the floor of only reading those files;
 * - the registry's cached listing and the prompt section (what each agent
 *   build and each middleware call pays);
 * - SkillToolPolicy per tool call, against calling the handler directly;
 * - the enabled-only sandbox view: first build (copies) and the unchanged check;
 * - installing a 20-file package and refusing a zip bomb.
 * Ends with one JSON line.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";
import type { Zippable } from "fflate";
import { humanMessage, toolMessage } from "../../packages/harness/src/messages";
import { createSkillToolPolicyMiddleware } from "../../packages/harness/src/middlewares/skill-tool-policy";
import { createRunOutcomeRecorder } from "../../packages/harness/src/runtime";
import type { Runtime, ToolCallRequest } from "../../packages/harness/src/runtime/types";
import { installSkillArchive, scanSkillRoot, SkillRegistry } from "../../packages/harness/src/skills";
import { heading, median, printResultLine, report, round, timeSamples } from "../lib";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURE = path.resolve(REPO, "../shared/fixtures/deerflow/skills");
const SKILLS = existsSync(path.join(FIXTURE, "public")) ? FIXTURE : path.join(REPO, "skills");

function ms(x: number): string {
  return `${round(x, 3)} ms`;
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), "dfbench-skills-"));
  try {
    const publicRoot = path.join(SKILLS, "public");
    const files = readdirSync(publicRoot).map((d) => path.join(publicRoot, d, "SKILL.md")).filter((f) => existsSync(f));
    heading(`Discovery (${files.length} skills from ${path.relative(REPO, SKILLS) || SKILLS})`);
    const floor = median(await timeSamples(() => Promise.all(files.map((f) => readFile(f, "utf8"))), { warmup: 5, iterations: 50 }));
    // A first scan parses every SKILL.md; later scans of unchanged files reuse the parse (keyed by path and stat),
    // so cold figures come from fresh copies of the tree, one scan each.
    const copies = Array.from({ length: 12 }, (_, i) => {
      const dir = path.join(work, `cold${i}`);
      cpSync(publicRoot, dir, { recursive: true });
      return dir;
    });
    const cold = median(await timeSamples((i) => scanSkillRoot(copies[i % copies.length]!, "public"), { warmup: 2, iterations: 10 }));
    const scan = median(await timeSamples(() => scanSkillRoot(publicRoot, "public"), { warmup: 5, iterations: 50 }));
    report("read the SKILL.md files only (floor)", ms(floor));
    report("first scan: walk + parse + validate", `${ms(cold)}  (${round(cold / floor, 1)}x the floor)`);
    report("re-scan, files unchanged (stat each, reuse the parse)", `${ms(scan)}  (${round(scan / floor, 2)}x the floor)`);

    const dataDir = path.join(work, "data");
    const registry = new SkillRegistry({ skillsPath: SKILLS, dataDir, extensionsPath: null, projectRoot: work });
    await registry.list("u");
    const cached = median(await timeSamples(() => registry.list("u"), { warmup: 20, iterations: 500 }));
    const prompt = median(await timeSamples(() => registry.promptSkills("u"), { warmup: 20, iterations: 500 }));
    report("registry.list (cached, per middleware call)", ms(cached));
    report("promptSkills (per agent build)", ms(prompt));

    heading("SkillToolPolicy per tool call");
    const mw = createSkillToolPolicyMiddleware({ registry });
    const runtime = { threadId: "t", runId: "r", context: { thread_id: "t", run_id: "r", user_id: "u" }, outcome: createRunOutcomeRecorder(), signal: new AbortController().signal, writer: () => {}, emit: () => {} } as unknown as Runtime;
    const request: ToolCallRequest = { toolCall: { id: "c1", name: "read_file", args: { path: "/mnt/skills/public/deep-research/SKILL.md" } }, state: { messages: [humanMessage("research tea")] }, runtime };
    const handler = async (req: ToolCallRequest) => toolMessage("ok", { tool_call_id: req.toolCall.id ?? "" });
    const direct = median(await timeSamples(() => handler(request), { warmup: 50, iterations: 2000 }));
    const wrapped = median(await timeSamples(() => mw.wrapToolCall!(request, handler), { warmup: 50, iterations: 2000 }));
    report("handler alone", ms(direct));
    report("through SkillToolPolicy (path check, policy, secrets)", `${ms(wrapped)}  (+${ms(wrapped - direct)})`);

    heading("Enabled-only sandbox view");
    const t0 = performance.now();
    await registry.ensureView("u");
    const viewCold = performance.now() - t0;
    const viewWarm = median(await timeSamples(() => registry.ensureView("u"), { warmup: 3, iterations: 30 }));
    report("first build (read-only copies of every enabled skill)", ms(viewCold));
    report("unchanged check at run start (signature only)", `${ms(viewWarm)}  (${round(viewCold / viewWarm, 1)}x cheaper than a rebuild)`);

    heading("Install");
    const pkg: Zippable = { "bench-skill/SKILL.md": new TextEncoder().encode("---\nname: bench-skill\ndescription: Bench package.\n---\n# Bench\n") };
    for (let i = 0; i < 19; i++) pkg[`bench-skill/references/r${i}.md`] = new TextEncoder().encode(`# Ref ${i}\n${"text ".repeat(400)}\n`);
    const archive = path.join(work, "bench.skill");
    writeFileSync(archive, zipSync(pkg));
    const installs = await timeSamples(
      async (i) => {
        const customRoot = path.join(work, `inst${i}`, "skills", "custom");
        await installSkillArchive(archive, { customRoot, exists: async () => false });
      },
      { warmup: 2, iterations: 15 },
    );
    const bomb = path.join(work, "bomb.skill");
    writeFileSync(bomb, zipSync({ "SKILL.md": readFileSync(path.join(publicRoot, readdirSync(publicRoot)[0]!, "SKILL.md")), "big.bin": [new Uint8Array(64 * 1024 * 1024), { level: 9 }] }));
    const refusals = await timeSamples(
      async (i) => {
        const err = await installSkillArchive(bomb, { customRoot: path.join(work, `bomb${i}`, "c"), exists: async () => false }).catch((e: unknown) => e);
        if (!(err instanceof Error) || !/highly compressed/.test(err.message)) throw new Error("the bomb was not refused");
      },
      { warmup: 1, iterations: 10 },
    );
    report("install a 20-file package (extract, validate, scan, rename)", ms(median(installs)));
    report("refuse a 64 MiB zip bomb (ratio check, nothing inflated)", ms(median(refusals)));

    printResultLine({
      skills: files.length,
      read_floor_ms: round(floor, 3),
      cold_scan_ms: round(cold, 3),
      cold_scan_vs_floor: round(cold / floor, 2),
      scan_ms: round(scan, 3),
      scan_vs_floor: round(scan / floor, 2),
      list_cached_ms: round(cached, 4),
      prompt_skills_ms: round(prompt, 4),
      policy_overhead_ms: round(wrapped - direct, 4),
      view_build_ms: round(viewCold, 2),
      view_check_ms: round(viewWarm, 3),
      install_ms: round(median(installs), 2),
      bomb_refusal_ms: round(median(refusals), 2),
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
