import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import { createSkillActivationMiddleware, SKILL_ACTIVATION_KEY } from "../../src/middlewares/skill-activation";
import { createAgent } from "../../src/runtime";
import { SkillRegistry } from "../../src/skills";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tempDir, writeSkill } from "../skills/helpers";

const root = tempDir("activation");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const skillsPath = path.join(root, "skills");
writeSkill(path.join(skillsPath, "public/deep-dive"), "name: deep-dive\ndescription: Research deeply.", "# Deep dive\nStep 1: search three angles.\n");
writeSkill(path.join(skillsPath, "public/off-skill"), "name: off-skill\ndescription: Disabled one.", "# Off\nSECRET BODY\n");
const extensionsPath = path.join(root, "extensions_config.json");
fs.writeFileSync(extensionsPath, JSON.stringify({ skills: { "off-skill": { enabled: false } } }));
const registry = new SkillRegistry({ skillsPath, dataDir: path.join(root, "data"), extensionsPath });

async function run(text: string, agentSkills?: string[] | null) {
  const model = new ScriptedModel(["done"]);
  const events: unknown[] = [];
  const agent = createAgent({ model, tools: [], stateSchema: threadStateSchema, middleware: [createSkillActivationMiddleware({ registry, agentSkills })] });
  const stream = agent.stream({ messages: [humanMessage(text)] }, { threadId: `t-${Math.random().toString(36).slice(2)}`, streamMode: ["custom"] });
  for await (const ev of stream) events.push(ev.data);
  const res = await stream.result;
  return { model, events, res };
}

describe("SkillActivationMiddleware", () => {
  it("validates options", () => {
    expect(() => createSkillActivationMiddleware({} as never)).toThrow(/registry/);
  });

  it("/skill-name injects the body as hidden context before the user's message, for the request only", async () => {
    const { model, events, res } = await run("/deep-dive the history of tea");
    const msgs = model.requests[0]!.messages;
    const injected = msgs.find((m) => m.additional_kwargs?.[SKILL_ACTIVATION_KEY] === "deep-dive");
    expect(injected?.type).toBe("human");
    expect(injected?.additional_kwargs?.hide_from_ui).toBe(true);
    expect(String(injected?.content)).toContain("<slash_skill_activation>");
    expect(String(injected?.content)).toContain("Step 1: search three angles.");
    expect(String(injected?.content)).toContain("/mnt/skills/public/deep-dive/SKILL.md");
    expect(msgs.indexOf(injected!)).toBe(msgs.length - 2);
    expect(res.state.messages.some((m) => m.additional_kwargs?.[SKILL_ACTIVATION_KEY])).toBe(false);
    expect(events).toContainEqual({ type: "middleware:skill_activation", skill_name: "deep-dive", category: "public", location: "/mnt/skills/public/deep-dive/SKILL.md" });
  });

  it("ignores disabled, unknown, reserved, mid-text and agent-excluded skills", async () => {
    for (const [text, agentSkills] of [["/off-skill go"], ["/nope go"], ["/help"], ["please /deep-dive"], ["/deep-dive go", []]] as Array<[string, string[]?]>) {
      const { model, events } = await run(text, agentSkills);
      expect(model.requests[0]!.messages.some((m) => m.additional_kwargs?.[SKILL_ACTIVATION_KEY]), text).toBe(false);
      expect(JSON.stringify(model.requests[0]!.messages)).not.toContain("SECRET BODY");
      expect(events).toEqual([]);
    }
  });

  it("passes through when the registry fails", async () => {
    const broken = { containerPath: "/mnt/skills", list: async () => Promise.reject(new Error("disk gone")) };
    const model = new ScriptedModel(["ok"]);
    const agent = createAgent({ model, tools: [], stateSchema: threadStateSchema, middleware: [createSkillActivationMiddleware({ registry: broken })] });
    const res = await agent.invoke({ messages: [humanMessage("/deep-dive x")] }, { threadId: "broken" });
    expect(res.status).toBe("success");
    expect(model.requests[0]!.messages).toHaveLength(1);
  });
});
