import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { aiMessage, humanMessage, toolMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createSkillToolPolicyMiddleware } from "../../src/middlewares/skill-tool-policy";
import { createAgent, createRunContext } from "../../src/runtime";
import type { ToolCallRequest } from "../../src/runtime/types";
import { SkillRegistry } from "../../src/skills";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { tempDir, writeSkill } from "../skills/helpers";
import { hookRuntime, okHandler, toolRequest } from "./_sandbox-fixtures";

const root = tempDir("policy");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const skillsPath = path.join(root, "skills");
writeSkill(path.join(skillsPath, "public/reader"), "name: reader\ndescription: Reads only.\nallowed-tools: [read_file, ls]");
writeSkill(path.join(skillsPath, "public/free"), "name: free\ndescription: No restriction.");
writeSkill(path.join(skillsPath, "public/off"), "name: off\ndescription: Disabled.");
writeSkill(path.join(skillsPath, "public/keyed"), "name: keyed\ndescription: Needs a key.\nrequired-secrets: [API_TOKEN, {name: OPTIONAL_ONE, optional: true}]");
writeSkill(path.join(skillsPath, "public/manual"), "name: manual\ndescription: Slash-only secrets.\nrequired-secrets: [API_TOKEN]\nsecrets-autonomous: false");
const extensionsPath = path.join(root, "extensions_config.json");
fs.writeFileSync(extensionsPath, JSON.stringify({ skills: { off: { enabled: false } } }));
const registry = new SkillRegistry({ skillsPath, dataDir: path.join(root, "data"), extensionsPath });

const echoTool = (name: string) => tool({ name, description: name, schema: z.object({}).passthrough(), execute: () => `${name} ran` });
const text = (r: unknown) => String((r as ToolMessage).content);

describe("SkillToolPolicyMiddleware", () => {
  it("validates options", () => {
    expect(() => createSkillToolPolicyMiddleware({ registry, bogus: 1 } as never)).toThrow(/bogus/);
  });

  it("slash activation: schemas filtered to allowed-tools (+ exempt), other calls refused", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "bash", args: { command: "ls" } }, { name: "read_file", args: { path: "/x" } }] }, "done"]);
    const tools = ["bash", "read_file", "ls", "tool_search", "task"].map(echoTool);
    const agent = createAgent({ model, tools, stateSchema: threadStateSchema, middleware: [createSkillToolPolicyMiddleware({ registry })] });
    const res = await agent.invoke({ messages: [humanMessage("/reader look at it")] }, { threadId: "slash" });
    expect(model.requests[0]!.tools.map((t) => t.name).sort()).toEqual(["ls", "read_file", "tool_search"]);
    const results = res.state.messages.filter((m): m is ToolMessage => m.type === "tool");
    expect(results.map((m) => [m.name, m.status, String(m.content)])).toEqual([
      ["bash", "error", "Error: Tool 'bash' is not allowed while skill 'reader' is active (allowed-tools: read_file, ls)."],
      ["read_file", "success", "read_file ran"],
    ]);
  });

  it("no active skill, or a skill without allowed-tools: nothing is filtered", async () => {
    const mw = createSkillToolPolicyMiddleware({ registry });
    for (const t of ["hello", "/free go"]) {
      const res = await mw.wrapToolCall!(toolRequest("bash", { command: "ls" }, { messages: [humanMessage(t)] }, hookRuntime("n")), okHandler());
      expect(text(res)).toBe("OK");
    }
  });

  it("a SKILL.md the model read activates the policy (successful reads only)", async () => {
    const mw = createSkillToolPolicyMiddleware({ registry });
    const read = aiMessage("", { tool_calls: [{ id: "r1", name: "read_file", args: { path: "/mnt/skills/public/reader/SKILL.md" } }] });
    const ok = { messages: [humanMessage("hi"), read, toolMessage("---\nname: reader", { tool_call_id: "r1" })] };
    expect(text(await mw.wrapToolCall!(toolRequest("bash", { command: "ls" }, ok, hookRuntime("c")), okHandler()))).toContain("not allowed while skill 'reader'");
    const failed = { messages: [humanMessage("hi"), read, toolMessage("Error: nope", { tool_call_id: "r1", status: "error" })] };
    expect(text(await mw.wrapToolCall!(toolRequest("bash", { command: "ls" }, failed, hookRuntime("c")), okHandler()))).toBe("OK");
    const fromContext = { messages: [humanMessage("hi")], skill_context: [{ name: "reader", path: "/mnt/skills/public/reader/SKILL.md", description: "", loaded_at: "" }] };
    expect(text(await mw.wrapToolCall!(toolRequest("task", {}, fromContext, hookRuntime("c")), okHandler()))).toContain("not allowed");
  });

  it("refuses every file tool and bash on a disabled skill's files", async () => {
    const mw = createSkillToolPolicyMiddleware({ registry });
    const st = { messages: [humanMessage("hi")] };
    const refusal = "Error: Skill 'off' is disabled. Its files cannot be used; ask the user to enable it first.";
    for (const [name, args] of [
      ["read_file", { path: "/mnt/skills/public/off/SKILL.md" }],
      ["ls", { path: "/mnt/skills/public/off" }],
      ["write_file", { path: "/mnt/skills/public/off/x.md", content: "x" }],
      ["str_replace", { path: "/mnt/skills/public/off/SKILL.md", old_str: "a", new_str: "b" }],
      ["glob", { path: "/mnt/skills/public/off", pattern: "*" }],
      ["grep", { path: "/mnt/skills/public/off", pattern: "x" }],
      ["bash", { command: "cat /mnt/skills/public/off/SKILL.md | head" }],
    ] as Array<[string, Record<string, unknown>]>) {
      const res = (await mw.wrapToolCall!(toolRequest(name, args, st, hookRuntime("d")), okHandler())) as ToolMessage;
      expect([name, res.status, String(res.content)]).toEqual([name, "error", refusal]);
    }
    expect(text(await mw.wrapToolCall!(toolRequest("read_file", { path: "/mnt/skills/public/free/SKILL.md" }, st, hookRuntime("d")), okHandler()))).toBe("OK");
  });

  it("a custom agent's skills list hides the others' files", async () => {
    const mw = createSkillToolPolicyMiddleware({ registry, agentSkills: ["free"] });
    const res = await mw.wrapToolCall!(toolRequest("read_file", { path: "/mnt/skills/public/reader/SKILL.md" }, { messages: [humanMessage("x")] }, hookRuntime("a")), okHandler());
    expect(text(res)).toBe("Error: Skill 'reader' is not available to this agent.");
  });

  it("fails closed when the registry is unavailable (exempt tools only)", async () => {
    const broken = { containerPath: "/mnt/skills", list: () => Promise.reject(new Error("x")) };
    const mw = createSkillToolPolicyMiddleware({ registry: broken });
    expect(text(await mw.wrapToolCall!(toolRequest("bash", { command: "ls" }, { messages: [humanMessage("x")] }, hookRuntime("b")), okHandler()))).toContain("not allowed");
    expect(text(await mw.wrapToolCall!(toolRequest("tool_search", {}, { messages: [humanMessage("x")] }, hookRuntime("b")), okHandler()))).toBe("OK");
  });

  describe("request-scoped secrets", () => {
    const secrets = { API_TOKEN: "tok-123456789", UNDECLARED: "other-secret-value" };
    const runtimeWith = () => {
      const rt = hookRuntime("s");
      return { ...rt, context: createRunContext({ threadId: rt.threadId, runId: rt.runId, context: { user_id: rt.context.user_id, secrets } }) };
    };
    const capture = (seen: string[]) => async (req: ToolCallRequest) => {
      seen.push(String((req.toolCall.args as { command?: string }).command ?? ""));
      return toolMessage(`value is tok-123456789 and ${secrets.UNDECLARED}`, { tool_call_id: req.toolCall.id, name: req.toolCall.name });
    };

    it("binds only declared names for the active skill, exports them for bash, redacts every result", async () => {
      const mw = createSkillToolPolicyMiddleware({ registry });
      const seen: string[] = [];
      const res = await mw.wrapToolCall!(toolRequest("bash", { command: "echo $API_TOKEN" }, { messages: [humanMessage("/keyed call the api")] }, runtimeWith()), capture(seen));
      expect(seen).toEqual(["export API_TOKEN='tok-123456789'\necho $API_TOKEN"]);
      expect(text(res)).toBe("value is [REDACTED:API_TOKEN] and other-secret-value");
    });

    it("nothing is bound without an active skill, or for an autonomous load when secrets-autonomous is false", async () => {
      const mw = createSkillToolPolicyMiddleware({ registry });
      const seen: string[] = [];
      await mw.wrapToolCall!(toolRequest("bash", { command: "echo" }, { messages: [humanMessage("no skill")] }, runtimeWith()), capture(seen));
      const read = aiMessage("", { tool_calls: [{ id: "r", name: "read_file", args: { path: "/mnt/skills/public/manual/SKILL.md" } }] });
      await mw.wrapToolCall!(toolRequest("bash", { command: "echo" }, { messages: [humanMessage("x"), read, toolMessage("ok", { tool_call_id: "r" })] }, runtimeWith()), capture(seen));
      expect(seen).toEqual(["echo", "echo"]);
      const read2 = aiMessage("", { tool_calls: [{ id: "r", name: "read_file", args: { path: "/mnt/skills/public/keyed/SKILL.md" } }] });
      await mw.wrapToolCall!(toolRequest("bash", { command: "echo" }, { messages: [humanMessage("x"), read2, toolMessage("ok", { tool_call_id: "r" })] }, runtimeWith()), capture(seen));
      expect(seen[2]).toBe("export API_TOKEN='tok-123456789'\necho");
    });
  });
});
