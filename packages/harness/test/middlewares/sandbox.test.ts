import { afterAll, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createSandboxTools } from "../../src/builtins/sandbox-tools";
import { createSandboxMiddleware } from "../../src/middlewares/sandbox";
import { createAgent } from "../../src/runtime";
import { LocalSandboxProvider, parseSandboxConfig } from "../../src/sandbox";
import { Command, threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tempBase } from "../sandbox/helpers";
import { hookRuntime, okHandler, toolRequest } from "./_sandbox-fixtures";

const b = tempBase("dfsbmw-");
afterAll(() => b.cleanup());

describe("SandboxMiddleware", () => {
  it("validates options", () => {
    expect(() => createSandboxMiddleware({ provider: {} } as never)).toThrow(/provider/);
  });

  it("acquires lazily on the first sandbox tool, records state.sandbox, releases in after_agent", async () => {
    const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: b.dir });
    const mw = createSandboxMiddleware({ provider });
    const rt = hookRuntime("t1");
    await mw.beforeAgent!({ messages: [] }, rt);
    const plain = await mw.wrapToolCall!(toolRequest("ask", {}, { messages: [] }, rt, { requiresSandbox: false }), okHandler());
    expect(plain).not.toBeInstanceOf(Command);
    expect(provider.leaseCount("local:default:t1")).toBe(0);
    const first = await mw.wrapToolCall!(toolRequest("ls", {}, { messages: [] }, rt, { requiresSandbox: true }), okHandler());
    expect(first).toBeInstanceOf(Command);
    expect((first as Command).update.sandbox).toEqual({ sandbox_id: "local:default:t1" });
    expect(((first as Command).update.messages as ToolMessage[])[0].content).toBe("OK");
    await mw.wrapToolCall!(toolRequest("ls", {}, { messages: [], sandbox: { sandbox_id: "local:default:t1" } }, rt, { requiresSandbox: true }), okHandler());
    expect(provider.leaseCount("local:default:t1")).toBe(1);
    // a sub-agent run (own context) holds its own lease
    const sub = hookRuntime("t1");
    await mw.wrapToolCall!(toolRequest("ls", {}, { messages: [] }, sub, { requiresSandbox: true }), okHandler());
    expect(provider.leaseCount("local:default:t1")).toBe(2);
    await mw.afterAgent!({ messages: [] }, rt);
    expect(provider.get("local:default:t1")).toBeDefined();
    await mw.afterAgent!({ messages: [] }, sub);
    expect(provider.get("local:default:t1")).toBeUndefined();
  });

  it("full agent run: a file tool call acquires the sandbox and writes state.sandbox", async () => {
    const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: b.dir });
    const model = new ScriptedModel([
      { toolCalls: [{ name: "write_file", args: { description: "save", path: "/mnt/user-data/outputs/a.md", content: "# A" } }] },
      { toolCalls: [{ name: "read_file", args: { description: "check", path: "/mnt/user-data/outputs/a.md" } }] },
      "done",
    ]);
    const agent = createAgent({
      model,
      tools: createSandboxTools({ provider }),
      middleware: [createSandboxMiddleware({ provider })],
      stateSchema: threadStateSchema,
    });
    const r = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "run1" });
    expect(r.status).toBe("success");
    expect(r.state.sandbox).toEqual({ sandbox_id: "local:default:run1" });
    const tools = r.state.messages.filter((m) => m.type === "tool") as ToolMessage[];
    expect(tools.map((t) => t.content)).toEqual(["OK", "# A"]);
    expect(provider.get("local:default:run1")).toBeUndefined(); // lease released after the run
  });
});
