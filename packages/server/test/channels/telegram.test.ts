import fs from "node:fs/promises";
import path from "node:path";
import { threadPaths } from "@deerflow-ts/harness";
import { afterEach, describe, expect, it } from "vitest";
import { startTelegramDouble } from "../../src/testing";
import type { TelegramDouble } from "../../src/testing";
import { connected, handled, polledAgain, startChannelGateway } from "./channel-harness";
import type { ChannelGateway } from "./channel-harness";

let double: TelegramDouble | undefined;
let gw: ChannelGateway | undefined;

afterEach(async () => {
  await gw?.close();
  await double?.close();
  gw = undefined;
  double = undefined;
});

async function start(steps: Parameters<typeof startChannelGateway>[0], telegram: Record<string, unknown> = {}, extra: Parameters<typeof startChannelGateway>[2] = {}) {
  double = await startTelegramDouble();
  gw = await startChannelGateway(steps, { telegram: { enabled: true, bot_token: double.token, api_base_url: double.url, ...telegram } }, extra);
  await connected(double);
  return { double, gw };
}

const methods = (d: TelegramDouble) => d.calls.items.map((c) => c.method).filter((m) => m !== "getUpdates" && m !== "getMe" && m !== "deleteWebhook");

describe("Telegram channel", () => {
  it("turns a message into a run on the chat's thread, streams the reply by editing one message, then sends the presented file", async () => {
    const { double, gw } = await start([
      { text: "Writing the report", toolCalls: [{ name: "write_output", args: { name: "report.txt", text: "quarterly numbers" }, id: "c1" }] },
      { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.txt"] }, id: "c2" }] },
      "Here is **your report**: it has the quarterly numbers you asked for.",
    ]);
    const update = double.sendUserMessage({ chatId: 77, text: "make me a report" });
    await handled(double, gw, update);

    const sent = double.messagesIn(77);
    expect(sent).toHaveLength(1); // one reply message, never a placeholder plus a second one
    const reply = sent[0]!;
    // streamed: created with the first text that arrived, then edited in place (coalesced while a call is in flight)
    expect(reply.texts.length).toBeGreaterThanOrEqual(2);
    expect(reply.texts[0]).not.toBe(reply.texts.at(-1));
    expect(reply.texts.at(-1)).toBe("Here is <b>your report</b>: it has the quarterly numbers you asked for.");
    expect(reply.parseMode).toBe("HTML");
    // the file after the text, as a document under its own name (not a caption of the reply)
    expect(double.documents.map((d) => [d.filename, d.bytes.toString()])).toEqual([["report.txt", "quarterly numbers"]]);
    const seq = methods(double);
    expect(seq.lastIndexOf("editMessageText")).toBeLessThan(seq.indexOf("sendDocument"));
    expect(seq.filter((m) => m === "sendMessage")).toHaveLength(1);

    // the run is on the chat's thread, owned by the default user, listed like any thread
    const res = await fetch(`${gw.url}/api/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({}) });
    const threads = (await res.json()) as Array<{ thread_id: string; metadata: Record<string, unknown>; values?: { messages?: Array<{ type: string; content: unknown }> } }>;
    expect(threads).toHaveLength(1);
    expect(threads[0]!.metadata).toMatchObject({ channel: "telegram", chat_id: "77" });
    const runs = await gw.gateway.stores.runs.listByThread(threads[0]!.thread_id);
    expect(runs.map((r) => [r.status, r.userId])).toEqual([["success", "default"]]);
    const state = await gw.gateway.runtime.readState(threads[0]!.thread_id);
    const human = (state!.values as { messages: Array<{ type: string; content: unknown }> }).messages[0]!;
    expect(human.type).toBe("human");
    expect(JSON.stringify(human.content)).toContain("make me a report");
    const [delivery] = await gw.manager().store.recentDeliveries("telegram", 5);
    expect(delivery).toMatchObject({ status: "done", messageId: "77:1", threadId: threads[0]!.thread_id, replyMessageId: String(reply.messageId) });
  });

  it("answers an update delivered three times once", async () => {
    const { double, gw } = await start(["only answer", "a second answer must never be produced"]);
    const update = double.sendUserMessage({ chatId: 5, text: "hello" });
    await handled(double, gw, update);
    double.redeliver(update);
    await polledAgain(double, gw);
    double.redeliver(update);
    await polledAgain(double, gw);
    expect(double.messagesIn(5)).toHaveLength(1);
    expect(double.messagesIn(5)[0]!.texts.at(-1)).toBe("only answer");
    expect(gw.model.callCount).toBe(1);
    expect(gw.manager().status().find((s) => s.name === "telegram")!.counts).toMatchObject({ received: 3, duplicates: 2, replied: 1 });
  });

  it("waits out a 429 for the retry_after Telegram gives, then delivers", async () => {
    const { double, gw } = await start(["patience pays"], {}, { chunkChars: 100 });
    double.fail({ method: "sendMessage", errorCode: 429, retryAfter: 7 });
    const update = double.sendUserMessage({ chatId: 9, text: "hi" });
    await handled(double, gw, update);
    expect(gw.sleeps).toContain(7000);
    expect(double.calls.items.filter((c) => c.method === "sendMessage")).toHaveLength(2); // the refused call and its retry
    expect(double.messagesIn(9).map((m) => m.texts.at(-1))).toEqual(["patience pays"]);
  });

  it("splits a reply longer than 4096 characters into messages that each fit", async () => {
    const paragraph = "word ".repeat(199).trim();
    const long = Array.from({ length: 6 }, () => paragraph).join("\n\n");
    const { double, gw } = await start([long], {}, { chunkChars: 2000 });
    const update = double.sendUserMessage({ chatId: 3, text: "write a lot" });
    await handled(double, gw, update);
    const sent = double.messagesIn(3);
    expect(sent.length).toBe(2);
    for (const m of sent) expect(m.texts.at(-1)!.length).toBeLessThanOrEqual(4096);
    expect(sent.map((m) => m.texts.at(-1)).join("\n").replace(/\s+/g, " ")).toBe(long.replace(/\s+/g, " "));
  });

  it("puts an incoming document in the thread's uploads and tells the run about it", async () => {
    const { double, gw } = await start(["got your file"]);
    const update = double.sendUserMessage({ chatId: 11, text: "summarise this", document: { filename: "notes.md", bytes: Buffer.from("# notes\nhello") } });
    await handled(double, gw, update);
    const [thread] = await gw.gateway.stores.threads.search({ userId: "default", limit: 10, offset: 0 });
    const uploads = threadPaths(gw.dataDir, "default", thread!.threadId).uploads;
    expect(await fs.readFile(path.join(uploads, "notes.md"), "utf8")).toBe("# notes\nhello");
    const state = await gw.gateway.runtime.readState(thread!.threadId);
    const human = (state!.values as { messages: Array<{ additional_kwargs?: { files?: unknown[] } }> }).messages[0]!;
    expect(human.additional_kwargs?.files).toEqual([expect.objectContaining({ filename: "notes.md", path: "/mnt/user-data/uploads/notes.md" })]);
    expect(double.messagesIn(11)[0]!.texts.at(-1)).toBe("got your file");
  });

  it("ignores senders outside allowed_users", async () => {
    const { double, gw } = await start(["for the allowed one"], { allowed_users: ["100"] });
    const stranger = double.sendUserMessage({ chatId: 1, text: "hi", from: { id: 200 } });
    await handled(double, gw, stranger);
    expect(double.messagesIn(1)).toHaveLength(0);
    const friend = double.sendUserMessage({ chatId: 2, text: "hi", from: { id: 100 } });
    await handled(double, gw, friend);
    expect(double.messagesIn(2).map((m) => m.texts.at(-1))).toEqual(["for the allowed one"]);
    const ignored = await gw.manager().store.getDelivery("telegram", "1:1");
    expect(ignored?.status).toBe("ignored");
  });

  it("answers /help, /models, /status, /new, /memory and /goal without a run", async () => {
    const { double, gw } = await start(["first answer"]);
    const ask = async (text: string) => {
      const u = double.sendUserMessage({ chatId: 8, text });
      await handled(double, gw, u);
      return double.messagesIn(8).at(-1)!.texts.at(-1)!;
    };
    expect(await ask("/help")).toContain("/new — Start a new conversation");
    expect(await ask("/models@deerflow_test_bot")).toContain("• scripted (Scripted) — default");
    expect(await ask("/status")).toBe("No active conversation.");
    await ask("hello");
    const [first] = await gw.gateway.stores.threads.search({ userId: "default", limit: 10, offset: 0 });
    expect(await ask("/status")).toContain(`Active thread: ${first!.threadId}`);
    expect(await ask("/new")).toBe("New conversation started.");
    const status = await ask("/status");
    expect(status).not.toContain(first!.threadId);
    expect(status).toMatch(/Active thread: [0-9a-f-]{36}\nRuns: 0/);
    expect(await ask("/memory")).toBe("Facts remembered: 0");
    expect(await ask("/goal")).toMatch(/goal/i);
    expect(gw.model.callCount).toBe(1);
  });
});
