/**
 * Skills wired into the runtime: the registry attached by DeerFlowRuntime,
 * the lead agent's prompt listing enabled skills (disabled apart, never
 * bodies, byte-stable across turns), slash activation, and a progressive
 * read of SKILL.md through the runtime's own sandbox and per-user view.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { ScriptedModel } from "../../src/testing";
import { humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { bwrapAvailable, tempBase } from "../sandbox/helpers";
import { writeSkill } from "./helpers";

const base = tempBase("dfsklead-");
afterAll(() => base.cleanup());
const dir = base.dir;
writeSkill(path.join(dir, "my-skills/public/alpha"), "name: alpha\ndescription: Alpha does research.", "# Alpha body\nALPHA-INSTRUCTIONS\n");
writeSkill(path.join(dir, "my-skills/public/beta"), "name: beta\ndescription: Beta is off.", "# Beta body\nBETA-SECRET\n");
fs.writeFileSync(path.join(dir, "extensions_config.json"), JSON.stringify({ mcpServers: {}, skills: { beta: { enabled: false } } }));

/** Write `root/config.yaml` (model m1 plus `extra` lines) and open a runtime on it whose chat model is `model`. */
function openRuntime(root: string, extra: string[], model: ScriptedModel): Promise<DeerFlowRuntime> {
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, "config.yaml"), ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", ...extra, ""].join("\n"));
  return DeerFlowRuntime.open({
    configPath: path.join(root, "config.yaml"),
    cwd: root,
    dataDir: path.join(root, "data"),
    log: () => undefined,
    modelFactory: () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
  });
}

function systemText(model: ScriptedModel, i: number): string {
  const first = model.requests[i]!.messages[0]!;
  expect(first.type).toBe("system");
  return String(first.content);
}

describe("skills in the lead agent (DeerFlowRuntime)", () => {
  it("prompt, activation, progressive read, toggle", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "read_file", args: { description: "load skill", path: "/mnt/skills/public/alpha/SKILL.md" } }] }, "done one", "done two", "done three"]);
    const rt = await openRuntime(dir, ["sandbox:", "  use: local", "skills:", "  path: my-skills", "title:", "  enabled: false"], model);
    try {
      const registry = rt.extensions.skills;
      expect(registry?.skillsPath).toBe(path.join(dir, "my-skills"));
      const client = new DeerFlowClient(rt);
      expect(await client.chat("/alpha research tea", { threadId: "t1" })).toBe("done one");

      const prompt = systemText(model, 0);
      expect(prompt).toContain("<name>alpha</name>");
      expect(prompt).toContain("<location>/mnt/skills/public/alpha/SKILL.md</location>");
      expect(prompt).toMatch(/<disabled_skills>\s*<name>beta<\/name>/);
      expect(prompt).not.toContain("ALPHA-INSTRUCTIONS");
      expect(prompt).not.toContain("BETA-SECRET");
      // Slash activation injected the body for this run only.
      expect(JSON.stringify(model.requests[0]!.messages)).toContain("ALPHA-INSTRUCTIONS");
      // The model's read_file of SKILL.md went through the runtime's sandbox and the user's view.
      const toolResult = model.requests[1]!.messages.find((m) => m.type === "tool");
      expect(String(toolResult?.content)).toContain("ALPHA-INSTRUCTIONS");
      expect(fs.existsSync(path.join(dir, "data/users/default/skills_view/public/alpha/SKILL.md"))).toBe(true);
      expect(fs.existsSync(path.join(dir, "data/users/default/skills_view/public/beta"))).toBe(false);

      // Next turn: the prompt prefix is byte-identical; no slash → no activation.
      expect(await client.chat("thanks", { threadId: "t1" })).toBe("done two");
      expect(systemText(model, 2)).toBe(prompt);
      expect(JSON.stringify(model.requests[2]!.messages.slice(-1))).not.toContain("ALPHA-INSTRUCTIONS");

      // Enabling beta changes the next run's prompt.
      await registry!.setEnabled("beta", true, "default");
      await client.chat("again", { threadId: "t2" });
      expect(systemText(model, 3)).toContain("<name>beta</name>");
      expect(systemText(model, 3)).not.toContain("<disabled_skills>");
    } finally {
      await rt.close();
    }
  });
});

describe.skipIf(!bwrapAvailable())("request-scoped secrets in bubblewrap", () => {
  it("binds a declared secret for the slash-activated skill only and redacts it from bash output", async () => {
    const root = path.join(dir, "secrets");
    writeSkill(path.join(root, "skills/public/keyed"), "name: keyed\ndescription: Calls an API with a token.\nrequired-secrets: [DEMO_TOKEN]", "# Keyed\nUse $DEMO_TOKEN.\n");
    const echo = { toolCalls: [{ name: "bash", args: { description: "call", command: 'echo "token=$DEMO_TOKEN" && printenv | grep -c OTHER_SECRET || true' } }] };
    const model = new ScriptedModel([echo, "ok", echo, "ok"]);
    const rt = await openRuntime(root, ["sandbox:", "  use: bwrap", "title:", "  enabled: false"], model);
    try {
      await rt.extensions.skills!.ensureView("default");
      const agent = await rt.buildAgent({ userId: "default" });
      const secrets = { DEMO_TOKEN: "tok-9f8e7d6c5b", OTHER_SECRET: "never-bound-value" };
      const bashOut = async (text: string, threadId: string) => {
        const res = await agent.invoke({ messages: [humanMessage(text)] }, { threadId, context: { user_id: "default", secrets } });
        return String(res.state.messages.find((m): m is ToolMessage => m.type === "tool")?.content);
      };
      const active = await bashOut("/keyed call it", "sec1");
      expect(active).toContain("token=[REDACTED:DEMO_TOKEN]");
      expect(active).not.toContain("tok-9f8e7d6c5b");
      expect(active).toMatch(/(^|\n)0(\n|$)/);
      const inactive = await bashOut("call it without the skill", "sec2");
      expect(inactive).toContain("token=\n");
    } finally {
      await rt.close();
    }
  });
});

describe("deferred skill discovery in the lead agent", () => {
  it("skills.deferred_discovery: names in <skill_index>, describe_skill added, no metadata list", async () => {
    const root = path.join(dir, "deferred");
    writeSkill(path.join(root, "skills/public/alpha"), "name: alpha\ndescription: ALPHA-DESCRIPTION here.");
    const model = new ScriptedModel([{ toolCalls: [{ name: "describe_skill", args: { name: "select:alpha" } }] }, "ok"]);
    const rt = await openRuntime(root, ["sandbox:", "  use: local", "skills:", "  deferred_discovery: true"], model);
    try {
      const agent = await rt.buildAgent({ userId: "default" });
      expect(agent.tools.map((t) => t.name)).toContain("describe_skill");
      const res = await agent.invoke({ messages: [humanMessage("which skill?")] }, { threadId: "deferred1", context: { user_id: "default" } });
      const prompt = systemText(model, 0);
      expect(prompt).toContain("Installed skills (names only): alpha");
      expect(prompt).not.toContain("ALPHA-DESCRIPTION");
      const described = res.state.messages.find((m): m is ToolMessage => m.type === "tool");
      expect(String(described?.content)).toContain("- Description: ALPHA-DESCRIPTION here. [built-in]");
    } finally {
      await rt.close();
    }
  });
});
