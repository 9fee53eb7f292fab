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

  it("acquires lazily on the first sandbox tool, records state.sandbox, releases when the run ends", async () => {
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
    await mw.afterRun!({ messages: [] }, rt, "success");
    expect(provider.get("local:default:t1")).toBeDefined();
    await mw.afterRun!({ messages: [] }, sub, "success");
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

describe("SandboxMiddleware lease on cancellation", () => {
  it("gives the run's lease back when the run is cancelled mid-tool", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { z } = await import("zod");
    const { createAgent } = await import("../../src/runtime");
    const { tool } = await import("../../src/tools");
    const { ScriptedModel } = await import("../../src/testing");
    const { humanMessage } = await import("../../src/messages");
    let started!: () => void;
    const startedP = new Promise<void>((r) => (started = r));
    const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: mkdtempSync(join(tmpdir(), "df-lease-")) });
    const hang = tool({
      name: "hang",
      description: "waits until aborted",
      schema: z.object({}),
      metadata: { requiresSandbox: true },
      execute: (_a, rt) => {
        started();
        return new Promise<string>((_res, rej) => rt.signal.addEventListener("abort", () => rej(rt.signal.reason)));
      },
    });
    const agent = createAgent({
      model: new ScriptedModel([{ toolCalls: [{ name: "hang", args: {} }] }]),
      tools: [hang],
      middleware: [createSandboxMiddleware({ provider })],
    });
    const ac = new AbortController();
    const run = agent.invoke({ messages: [humanMessage("x")] }, { threadId: "lease1", signal: ac.signal });
    await startedP;
    expect(provider.leaseCount("local:default:lease1")).toBe(1);
    ac.abort();
    expect((await run).status).toBe("cancelled");
    expect(provider.leaseCount("local:default:lease1")).toBe(0);
  });
});
