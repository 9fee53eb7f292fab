import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Checkpointer, MemoryCheckpointStore, SqliteCheckpointStore } from "../../src/checkpoints";
import type { CheckpointRecord } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import type { AIMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

const dir = mkdtempSync(path.join(tmpdir(), "df-durable-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const repoRoot = path.resolve(__dirname, "../../../..");
const src = (p: string) => JSON.stringify(path.resolve(__dirname, "../../src", p));

interface Row {
  checkpoint_id: string;
  metadata: string;
  delta: string;
}

/** The thread's rows as another connection sees them (what is committed), oldest first. */
function committedRows(file: string, threadId: string): Row[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT checkpoint_id, metadata, delta FROM checkpoints WHERE thread_id = ? ORDER BY seq").all(threadId) as Row[];
  } finally {
    db.close();
  }
}

/** A memory store whose writes commit only when released (until `hold` is turned off). */
class HeldStore extends MemoryCheckpointStore {
  readonly puts: CheckpointRecord[] = [];
  /** Writes committed so far. */
  committed = 0;
  hold = true;
  private held: Array<() => void> = [];
  private waiters: Array<() => void> = [];

  override async put(record: CheckpointRecord): Promise<void> {
    this.puts.push(record);
    for (const w of this.waiters.splice(0)) w();
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    await super.put(record);
    this.committed++;
  }

  /** Resolves once `n` writes were queued. */
  async queued(n: number): Promise<void> {
    while (this.puts.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Commit every held write, and the later ones at once. */
  releaseAll(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }
}

describe("durability points of a run", () => {
  it("a tool with side effects starts only once the checkpoint that asked for it is committed (seen from a second connection)", async () => {
    const file = path.join(dir, "second-connection.db");
    const store = new SqliteCheckpointStore(file);
    let seenAtCall: Row[] = [];
    const sideEffect = tool({
      name: "send_mail",
      description: "sends a mail",
      schema: z.object({ to: z.string() }),
      execute: () => {
        seenAtCall = committedRows(file, "t-second");
        return "sent";
      },
    });
    try {
      const model = new ScriptedModel([{ text: "sending", toolCalls: [{ name: "send_mail", args: { to: "a@b.c" }, id: "call_mail" }] }, "done"]);
      const agent = createAgent({ model, tools: [sideEffect], checkpointer: store });
      const result = await agent.invoke({ messages: [humanMessage("mail them")] }, { threadId: "t-second" });
      expect(result.status).toBe("success");
      // At the moment the tool started, the committed head was the model's checkpoint holding the call.
      const head = seenAtCall[seenAtCall.length - 1];
      expect(JSON.parse(head.metadata)).toMatchObject({ writer: "model", __next: ["tools"] });
      expect(head.delta).toContain("call_mail");
      // The run's end is committed before its result is returned: its head is the last committed row.
      const after = committedRows(file, "t-second");
      expect(after[after.length - 1].checkpoint_id).toBe(result.checkpointId);
    } finally {
      await store.close();
    }
  });

  it("an interrupted run returns only once the checkpoint holding its interrupt is committed", async () => {
    const file = path.join(dir, "interrupt.db");
    const store = new SqliteCheckpointStore(file);
    const ask = tool({
      name: "ask",
      description: "asks the user",
      schema: z.object({}),
      sideEffects: false,
      execute: (_args, runtime) => runtime.interrupt<string>({ question: "which one?" }),
    });
    try {
      const model = new ScriptedModel([{ text: "asking", toolCalls: [{ name: "ask", args: {} }] }]);
      const agent = createAgent({ model, tools: [ask], checkpointer: store });
      const result = await agent.invoke({ messages: [humanMessage("pick")] }, { threadId: "t-int" });
      expect(result.status).toBe("interrupted");
      const rows = committedRows(file, "t-int");
      const head = rows[rows.length - 1];
      expect(head.checkpoint_id).toBe(result.checkpointId);
      expect(JSON.parse(head.metadata).interrupts[0].value).toEqual({ question: "which one?" });
    } finally {
      await store.close();
    }
  });

  it("a tool with side effects waits for the commit; one declared read-only does not", async () => {
    const store = new HeldStore();
    let committedAtMail = -1;
    let committedAtLook = -1;
    const mail = tool({ name: "mail", description: "mails", schema: z.object({}), execute: () => ((committedAtMail = store.committed), "sent") });
    const look = tool({ name: "look", description: "reads", schema: z.object({}), sideEffects: false, execute: () => ((committedAtLook = store.committed), "seen") });
    expect(look.sideEffects).toBe(false);
    expect(mail.sideEffects).toBeUndefined();
    const model = new ScriptedModel([
      { text: "looking", toolCalls: [{ name: "look", args: {} }] },
      { text: "mailing", toolCalls: [{ name: "mail", args: {} }] },
      "done",
    ]);
    const agent = createAgent({ model, tools: [mail, look], checkpointer: store });
    const run = agent.invoke({ messages: [humanMessage("go")] }, { threadId: "t-held" });
    // input, model (look), tools, model (mail): queued with nothing committed.
    await store.queued(4);
    expect(committedAtLook).toBe(0); // the read-only tool ran before its checkpoint (the 2nd write) was committed
    store.releaseAll();
    const result = await run;
    expect(result.status).toBe("success");
    // The mail went out only once the checkpoint asking for it (the 4th write) and everything before it was committed.
    expect(committedAtMail).toBe(4);
    expect((await new Checkpointer(store).load("t-held"))!.values.messages.map((m) => m.content)).toEqual(["go", "looking", "seen", "mailing", "sent", "done"]);
  });

  it("a process killed the moment a side-effecting tool starts keeps the checkpoint with the call, and a killed process keeps every step of a run that returned", async () => {
    const file = path.join(dir, "crash.db");
    const marker = path.join(dir, "mail-sent");
    // One process: a run that returns (its result printed), then a run whose tool kills the process as it starts.
    const script = `import { SqliteCheckpointStore } from ${src("checkpoints/index.ts")};
import { createAgent } from ${src("runtime/index.ts")};
import { ScriptedModel } from ${src("testing/index.ts")};
import { tool } from ${src("tools/index.ts")};
import { humanMessage } from ${src("messages/index.ts")};
import { z } from "zod";
import { writeFileSync } from "node:fs";
const store = new SqliteCheckpointStore(${JSON.stringify(file)});
const mail = tool({ name: "send_mail", description: "sends", schema: z.object({}), execute: () => {
  writeFileSync(${JSON.stringify(marker)}, "sent");
  process.kill(process.pid, "SIGKILL");
  return "unreachable";
} });
const model = new ScriptedModel(["first answer", { text: "sending", toolCalls: [{ name: "send_mail", args: {}, id: "call_crash" }] }, "never"]);
const agent = createAgent({ model, tools: [mail], checkpointer: store });
const first = await agent.invoke({ messages: [humanMessage("hello")] }, { threadId: "t-crash" });
process.stdout.write(JSON.stringify({ status: first.status, checkpointId: first.checkpointId }) + "\\n");
await agent.invoke({ messages: [humanMessage("mail them")] }, { threadId: "t-crash" });
`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, sig) => resolve(sig)));
    expect(err).toBe("");
    expect(signal).toBe("SIGKILL");
    expect(existsSync(marker)).toBe(true); // the side effect happened
    const first = JSON.parse(out.trim().split("\n")[0]) as { status: string; checkpointId: string };
    expect(first.status).toBe("success");
    const store = new SqliteCheckpointStore(file);
    try {
      const cp = new Checkpointer(store);
      // The returned run's head survived the kill.
      expect((await cp.load("t-crash", first.checkpointId))!.values.messages.map((m) => m.content)).toEqual(["hello", "first answer"]);
      // The second run's head is the checkpoint that asked for the tool call: the call is known, its result is not.
      const head = (await cp.load("t-crash"))!;
      const last = head.values.messages[head.values.messages.length - 1] as AIMessage;
      expect(last.type).toBe("ai");
      expect(last.tool_calls.map((c) => c.id)).toEqual(["call_crash"]);
      expect(head.record.metadata).toMatchObject({ writer: "model", __next: ["tools"] });
    } finally {
      await store.close();
    }
  }, 30_000);
});
