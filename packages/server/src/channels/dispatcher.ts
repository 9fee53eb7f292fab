import { randomUUID } from "node:crypto";
import { readArtifact, threadPaths, TERMINAL_RUN_STATUSES, UploadManager } from "@deerflow-ts/harness";
import type { UploadSource } from "@deerflow-ts/harness";
import { appSettings } from "../app-settings";
import type { GatewayContext } from "../context";
import { runCreateRequestSchema } from "../runs/run-request";
import { createRun } from "../runs/create-run";
import type { ChannelStore, DeliveryRecord } from "./channel-store";
import { helpText, modelsText, parseCommand } from "./commands";
import type { ChannelConnectionsSection, ChannelsSection } from "./config";
import { latestTurnAiText, ReplyStream } from "./reply-stream";
import type { ChannelAdapter, InboundMessage, ReplyTarget } from "./types";

/** What the dispatcher reads from the server. */
export interface DispatcherOptions {
  ctx: GatewayContext;
  store: ChannelStore;
  /** This process's claim owner id. */
  owner: string;
  channels: () => ChannelsSection;
  connections: () => ChannelConnectionsSection;
  /** In-process requests to the gateway's own API (the `/goal` command uses the goal routes). */
  request?: (path: string, init?: RequestInit) => Promise<Response>;
  editIntervalMs: number;
  clock: () => number;
  log: (message: string) => void;
}

/** How one inbound message was handled. */
export type DispatchOutcome = "replied" | "command" | "ignored" | "duplicate" | "recovered" | "failed";

const INTERRUPTED_NOTE = "(This reply was cut short: the server restarted while it was being written.)";

/**
 * Handles inbound messages: one claim per platform message id in the store
 * (a redelivery finds the claim and does nothing, or finishes the one reply
 * a dead process left), chat commands, chat → thread, uploads, a run through
 * the gateway's run service, the reply streamed into one message, and the
 * files the run newly presented sent after the text.
 */
export class ChannelDispatcher {
  constructor(private readonly o: DispatcherOptions) {}

  private now(): string {
    return new Date(this.o.clock()).toISOString();
  }

  /** Record a message before it is queued: false when it was delivered before (by any process). */
  claim(message: InboundMessage): Promise<boolean> {
    return this.o.store.claim(message.channel, message.messageId, message.chatId, this.o.owner, this.now());
  }

  /** The chat's key in the thread map: `chat[:topic]`. */
  static chatKey(message: Pick<InboundMessage, "chatId" | "topicId">): string {
    return message.topicId ? `${message.chatId}:${message.topicId}` : message.chatId;
  }

  private target(message: InboundMessage): ReplyTarget {
    return { chatId: message.chatId, topicId: message.topicId, replyToMessageId: message.messageId };
  }

  private allowed(message: InboundMessage): boolean {
    const entry = this.o.channels()[message.channel] as { allowed_users?: string[] } | null | undefined;
    const list = entry?.allowed_users ?? [];
    return list.length === 0 || list.includes(message.userId);
  }

  /**
   * The user a message runs as: the default user with auth off; the bound
   * user with auth on (undefined: the chat must be connected first, unless
   * `channel_connections.require_bound_identity` is false).
   */
  private async userFor(message: InboundMessage): Promise<string | undefined> {
    if (!this.o.ctx.auth.check().enabled) return this.o.ctx.options.userId;
    const bound = await this.o.store.boundUser(message.channel, message.userId);
    if (bound) return bound;
    const conn = this.o.connections();
    return conn.require_bound_identity ? undefined : this.o.ctx.options.userId;
  }

  /** Handle a message claimed by {@link claim}. Never throws: a failure is recorded on the delivery and told to the chat. */
  async handle(adapter: ChannelAdapter, message: InboundMessage): Promise<DispatchOutcome> {
    const { store } = this.o;
    try {
      if (!this.allowed(message)) {
        await store.updateDelivery(message.channel, message.messageId, { status: "ignored", error: "sender not in allowed_users" }, this.now());
        return "ignored";
      }
      const command = parseCommand(message.text);
      if (command && (command.name === "/connect" || (command.name === "/start" && command.args))) {
        await this.replyOnce(adapter, message, await this.bind(message, command.args));
        return "command";
      }
      const userId = await this.userFor(message);
      if (!userId) {
        await this.replyOnce(adapter, message, "This chat is not linked to a DeerFlow account yet. In DeerFlow open Settings → Channels, press Connect, then send the /connect <code> it shows here.");
        return "command";
      }
      if (command && command.name !== "/start") {
        const text = await this.command(message, userId, command.name, command.args);
        if (text !== undefined) {
          await this.replyOnce(adapter, message, text);
          return "command";
        }
      }
      await this.runAndReply(adapter, message, userId);
      return "replied";
    } catch (err) {
      const text = (err as Error).message ?? String(err);
      this.o.log(`[channels] ${message.channel}: message ${message.messageId} failed: ${text}`);
      await store.updateDelivery(message.channel, message.messageId, { status: "failed", error: text.slice(0, 500) }, this.now()).catch(() => undefined);
      return "failed";
    }
  }

  /** A reply that is not a run (commands, refusals): one message, recorded before the delivery is done. */
  private async replyOnce(adapter: ChannelAdapter, message: InboundMessage, markdown: string): Promise<void> {
    const stream = this.stream(adapter, message, null);
    await stream.finish(markdown);
    await this.o.store.updateDelivery(message.channel, message.messageId, { status: "done" }, this.now());
  }

  private stream(adapter: ChannelAdapter, message: InboundMessage, replyMessageId: string | null): ReplyStream {
    return new ReplyStream({
      adapter,
      target: this.target(message),
      replyMessageId,
      onReplyMessage: (id) => this.o.store.updateDelivery(message.channel, message.messageId, { status: "replying", replyMessageId: id }, this.now()),
      editIntervalMs: this.o.editIntervalMs,
      clock: this.o.clock,
      log: this.o.log,
    });
  }

  private async bind(message: InboundMessage, code: string): Promise<string> {
    if (!code) return "Send /connect <code> with the code DeerFlow showed you.";
    const owner = await this.o.store.consumeConnectCode(code, message.channel, this.o.clock());
    if (!owner) return "That code is unknown or has expired. Press Connect in DeerFlow again for a new one.";
    await this.o.store.connect(
      { id: randomUUID(), provider: message.channel, ownerUserId: owner, externalAccountId: message.userId, externalAccountName: message.userName ?? null, workspaceId: null },
      this.now(),
    );
    return "This chat is now linked to your DeerFlow account.";
  }

  /** The chat's thread, created on first use (or by `/new`). */
  private async thread(message: InboundMessage, userId: string, fresh = false): Promise<string> {
    const key = ChannelDispatcher.chatKey(message);
    const known = fresh ? undefined : await this.o.store.getChatThread(message.channel, key);
    if (known && known.userId === userId && (await this.o.ctx.stores.threads.get(known.threadId))) return known.threadId;
    const threadId = randomUUID();
    const ts = this.now();
    const metadata: Record<string, unknown> = { channel: message.channel, chat_id: message.chatId };
    if (message.topicId) metadata.topic_id = message.topicId;
    await this.o.ctx.stores.threads.create({ threadId, userId, status: "idle", metadata, displayName: null, createdAt: ts, updatedAt: ts });
    await this.o.store.setChatThread(message.channel, key, { threadId, userId }, ts);
    return threadId;
  }

  /** A command's reply text, or undefined when the text goes to the agent (an unknown `/word`). */
  private async command(message: InboundMessage, userId: string, name: string, args: string): Promise<string | undefined> {
    switch (name) {
      case "/help":
        return helpText();
      case "/new":
        await this.thread(message, userId, true);
        return "New conversation started.";
      case "/models":
        return modelsText(appSettings(this.o.ctx).models);
      case "/status": {
        const known = await this.o.store.getChatThread(message.channel, ChannelDispatcher.chatKey(message));
        if (!known) return "No active conversation.";
        const runs = await this.o.ctx.stores.runs.listByThread(known.threadId);
        const last = runs[0];
        return `Active thread: ${known.threadId}\nRuns: ${runs.length}${last ? `\nLast run: ${last.status} (${last.updatedAt ?? last.createdAt})` : ""}`;
      }
      case "/memory": {
        const memory = this.o.ctx.runtime.extensions.memory;
        if (!memory) return "Memory is off on this server.";
        const doc = memory.getMemory({ userId, agentName: null });
        const summary = Object.entries(doc.user)
          .map(([k, v]) => ((v as { summary?: string }).summary ? `• ${k}: ${(v as { summary: string }).summary}` : ""))
          .filter(Boolean);
        return [`Facts remembered: ${doc.facts.length}`, ...summary, ...doc.facts.slice(0, 10).map((f) => `• ${(f as { content?: string }).content ?? ""}`)].join("\n");
      }
      case "/goal":
        return this.goal(message, userId, args);
      default:
        return undefined;
    }
  }

  private async goal(message: InboundMessage, userId: string, args: string): Promise<string> {
    if (!this.o.request) return "Goal mode is not available on this server.";
    if (this.o.ctx.auth.check().enabled) return "Goal mode from chat needs auth to be off on this server; set the goal in the web UI.";
    const threadId = await this.thread(message, userId);
    const url = `/api/threads/${threadId}/goal`;
    const clear = args.toLowerCase() === "clear";
    const res = args
      ? await this.o.request(url, clear ? { method: "DELETE" } : { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ condition: args }) })
      : await this.o.request(url);
    if (res.status === 404 || res.status === 405) return "Goal mode is not available on this server.";
    const body = (await res.json().catch(() => ({}))) as { goal?: { condition?: string; status?: string } | null; detail?: string };
    if (!res.ok) return `The goal could not be ${args ? "changed" : "read"}: ${body.detail ?? res.status}`;
    if (clear) return "Goal cleared.";
    if (!body.goal) return "No active goal.";
    return `Goal: ${body.goal.condition ?? ""}${body.goal.status ? ` (${body.goal.status})` : ""}`;
  }

  private async saveFiles(message: InboundMessage, userId: string, threadId: string): Promise<Array<Record<string, unknown>>> {
    if (!message.files.length) return [];
    const sources: UploadSource[] = [];
    for (const f of message.files) {
      const bytes = await f.download();
      sources.push({ filename: f.name, stream: new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(), size: bytes.byteLength });
    }
    const manager = new UploadManager(appSettings(this.o.ctx).uploads);
    const saved = await manager.save(threadPaths(this.o.ctx.options.baseDir, userId, threadId), sources);
    return saved.files.map((f) => ({ filename: f.filename, size: f.size, path: f.virtual_path, status: "uploaded" }));
  }

  private async artifacts(threadId: string): Promise<string[]> {
    const snap = await this.o.ctx.runtime.readState(threadId).catch(() => undefined);
    const list = (snap?.values as { artifacts?: unknown } | undefined)?.artifacts;
    return Array.isArray(list) ? list.filter((a): a is string => typeof a === "string") : [];
  }

  private async runAndReply(adapter: ChannelAdapter, message: InboundMessage, userId: string): Promise<void> {
    const { ctx, store } = this.o;
    const threadId = await this.thread(message, userId);
    const files = await this.saveFiles(message, userId, threadId);
    const before = new Set(await this.artifacts(threadId));
    const session = this.o.channels().session;
    const body = runCreateRequestSchema.parse({
      assistant_id: session?.assistant_id ?? undefined,
      input: { messages: [{ type: "human", content: [{ type: "text", text: message.text }], additional_kwargs: files.length ? { files } : {} }] },
      context: { ...(session?.context ?? {}) },
      metadata: { channel: message.channel, chat_id: message.chatId, channel_message_id: message.messageId },
      stream_mode: ["messages-tuple", "values"],
      multitask_strategy: "enqueue",
      on_disconnect: "continue",
    });
    const run = await createRun(ctx, threadId, body, userId, { waitForStore: true });
    await store.updateDelivery(message.channel, message.messageId, { status: "running", threadId, runId: run.runId }, this.now());
    const reply = this.stream(adapter, message, null);
    await reply.follow(run);
    const end = await run.done;
    await run.recorded;
    await this.finishReply(adapter, message, reply, threadId, userId, before, end.status === "success" ? null : (end.error ?? end.status));
  }

  private async finishReply(adapter: ChannelAdapter, message: InboundMessage, reply: ReplyStream, threadId: string, userId: string, before: ReadonlySet<string>, failure: string | null): Promise<void> {
    const snap = await this.o.ctx.runtime.readState(threadId).catch(() => undefined);
    const answer = latestTurnAiText((snap?.values as { messages?: unknown } | undefined)?.messages);
    const text = failure ? `${reply.streamedMarkdown || answer}${reply.streamedMarkdown || answer ? "\n\n" : ""}⚠️ ${failure}` : answer || reply.streamedMarkdown;
    await reply.finish(text);
    for (const virtualPath of (await this.artifacts(threadId)).filter((a) => !before.has(a))) {
      try {
        const file = await readArtifact(threadPaths(this.o.ctx.options.baseDir, userId, threadId), virtualPath);
        await adapter.sendFile(this.target(message), { name: virtualPath.split("/").pop()!, bytes: file.bytes, mimeType: file.mimeType });
      } catch (err) {
        this.o.log(`[channels] ${message.channel}: sending ${virtualPath} failed: ${(err as Error).message}`);
      }
    }
    await this.o.store.updateDelivery(message.channel, message.messageId, { status: failure ? "failed" : "done", error: failure }, this.now());
  }

  /**
   * A delivery another process claimed and did not finish (it died, or was
   * restarted): once its run has ended, this process takes the delivery over
   * (one process wins) and gives the one reply its final text — the answer
   * the run stored, or what is known with a note that it was cut short.
   * Nothing is sent twice; a delivery whose run still runs is left alone.
   */
  async recover(adapter: ChannelAdapter, record: DeliveryRecord): Promise<DispatchOutcome> {
    if (record.owner === this.o.owner) return "duplicate";
    const run = record.runId ? await this.o.ctx.stores.runs.get(record.runId) : undefined;
    if (record.runId && (!run || !TERMINAL_RUN_STATUSES.has(run.status))) return "duplicate";
    // no run yet: on shared backends another process may be just starting it; on this process's own it died
    if (!record.runId && this.o.ctx.runs.shared && this.o.clock() - Date.parse(record.updatedAt) < 120_000) return "duplicate";
    if (!(await this.o.store.takeOver(record.channel, record.messageId, record.owner, this.o.owner, this.now()))) return "duplicate";
    const message: InboundMessage = { channel: record.channel as InboundMessage["channel"], chatId: record.chatId, messageId: record.messageId, userId: "", text: "", files: [] };
    const reply = this.stream(adapter, message, record.replyMessageId);
    try {
      if (!record.runId || !record.threadId) {
        await reply.finish(`Sorry, this message was not answered: ${INTERRUPTED_NOTE.slice(1, -1).toLowerCase()} Please send it again.`);
      } else {
        const snap = await this.o.ctx.runtime.readState(record.threadId).catch(() => undefined);
        const answer = latestTurnAiText((snap?.values as { messages?: unknown } | undefined)?.messages);
        await reply.finish(run!.status === "success" ? answer : `${answer ? `${answer}\n\n` : ""}${INTERRUPTED_NOTE}`);
      }
      await this.o.store.updateDelivery(record.channel, record.messageId, { status: "done" }, this.now());
      return "recovered";
    } catch (err) {
      await this.o.store.updateDelivery(record.channel, record.messageId, { status: "failed", error: (err as Error).message.slice(0, 500) }, this.now());
      return "failed";
    }
  }
}
