import { afterAll, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import type { Message, ToolMessage } from "../../src/messages";
import { createSandboxTools } from "../../src/builtins/sandbox-tools";
import {
  contentHash,
  createReadBeforeWriteMiddleware,
  READ_MARK_KEY,
  readBeforeWriteBlockMessage,
} from "../../src/middlewares/read-before-write";
import { createSandboxMiddleware } from "../../src/middlewares/sandbox";
import { createAgent } from "../../src/runtime";
import { LocalSandboxProvider, parseSandboxConfig } from "../../src/sandbox";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tempBase } from "../sandbox/helpers";
import { hookRuntime, okHandler, toolRequest } from "./_sandbox-fixtures";

const b = tempBase("dfrbw-");
afterAll(() => b.cleanup());
const P = "/mnt/user-data/workspace/notes.md";

describe("ReadBeforeWriteMiddleware", () => {
  const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: b.dir });

  it("validates options", () => {
    expect(() => createReadBeforeWriteMiddleware({} as never)).toThrow(/provider/);
  });

  it("stamps read marks, blocks unread/stale writes, allows new files and fresh reads", async () => {
    const mw = createReadBeforeWriteMiddleware({ provider });
    const rt = hookRuntime("t1");
    const sb = provider.get(await provider.acquire("t1"))!;
    // new file: allowed
    const created = await mw.wrapToolCall!(toolRequest("write_file", { path: P, content: "v1" }, { messages: [] }, rt), async (req) => {
      await sb.writeFile(P, "v1");
      return okHandler()(req);
    });
    expect((created as ToolMessage).content).toBe("OK");
    // existing, never read: blocked
    let ran = false;
    const blocked = (await mw.wrapToolCall!(toolRequest("str_replace", { path: P, old_str: "v", new_str: "w" }, { messages: [] }, rt), async (req) => {
      ran = true;
      return okHandler()(req);
    })) as ToolMessage;
    expect(ran).toBe(false);
    expect(blocked.status).toBe("error");
    expect(blocked.content).toBe(readBeforeWriteBlockMessage("str_replace", P));
    // read → mark
    const read = (await mw.wrapToolCall!(toolRequest("read_file", { path: P }, { messages: [] }, rt), okHandler("v1"))) as ToolMessage;
    expect(read.additional_kwargs[READ_MARK_KEY]).toEqual({ path: P, hash: contentHash("v1") });
    const history: Message[] = [read];
    const allowed = (await mw.wrapToolCall!(toolRequest("write_file", { path: P, content: "x", append: true }, { messages: history }, rt), okHandler())) as ToolMessage;
    expect(allowed.content).toBe("OK");
    // the file changes (a write never refreshes marks) → stale
    await sb.writeFile(P, "v2");
    const stale = (await mw.wrapToolCall!(toolRequest("write_file", { path: P, content: "y" }, { messages: history }, rt), okHandler())) as ToolMessage;
    expect(stale.status).toBe("error");
    // disabled → passes through
    const off = createReadBeforeWriteMiddleware({ provider, enabled: false });
    expect(((await off.wrapToolCall!(toolRequest("write_file", { path: P, content: "y" }, { messages: [] }, rt), okHandler())) as ToolMessage).content).toBe("OK");
    await provider.release(sb.id);
  });

  it("full agent run: blocked, then read, then the edit goes through", async () => {
    const sb = provider.get(await provider.acquire("run2"))!;
    await sb.writeFile(P, "hello world");
    const model = new ScriptedModel([
      { toolCalls: [{ name: "str_replace", args: { description: "edit", path: P, old_str: "world", new_str: "there" } }] },
      { toolCalls: [{ name: "read_file", args: { description: "read", path: P, start_line: 1, end_line: 1 } }] },
      { toolCalls: [{ name: "str_replace", args: { description: "edit", path: P, old_str: "world", new_str: "there" } }] },
      { toolCalls: [{ name: "str_replace", args: { description: "edit again", path: P, old_str: "there", new_str: "all" } }] },
      "done",
    ]);
    const agent = createAgent({
      model,
      tools: createSandboxTools({ provider }),
      middleware: [createSandboxMiddleware({ provider }), createReadBeforeWriteMiddleware({ provider })],
      stateSchema: threadStateSchema,
    });
    const r = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "run2" });
    const tools = r.state.messages.filter((m) => m.type === "tool") as ToolMessage[];
    expect(tools[0].content).toMatch(/^Error: str_replace blocked/);
    expect(tools[1].content).toBe("hello world");
    expect(tools[2].content).toBe("OK");
    expect(tools[3].content).toMatch(/^Error: str_replace blocked/); // writes never refresh marks
    expect(await sb.readFile(P)).toBe("hello there");
    await provider.release(sb.id);
  });
});
