/**
 * RemoteDeerFlowClient against a real gateway over HTTP: the same events as
 * the embedded DeerFlowClient for the same scripted run, every REST helper,
 * and — with sign-in on — personal access tokens: a `run` token chats and
 * streams, a `read` token lists but cannot start a run, another user's
 * thread is not found, a revoked token is refused. The LangGraph SDK does
 * the same with `defaultHeaders: {Authorization: "Bearer …"}`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAgent, DeerFlowClient, MemoryCheckpointStore, RemoteAuthError, RemoteDeerFlowClient, RemoteHttpError, threadPaths, threadStateSchema } from "@deerflow-ts/harness";
import type { ClientStreamEvent } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { ScriptStep } from "@deerflow-ts/harness/testing";
import { echoTool, humanInput, sleepTool, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";
import { addUser, initializeAdmin, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";

const TURN: ScriptStep[] = [{ text: "Echoing.", toolCalls: [{ name: "echo", args: { text: "remote" }, id: "call_e" }] }, "Final answer."];

async function collect(events: AsyncIterable<ClientStreamEvent>): Promise<ClientStreamEvent[]> {
  const out: ClientStreamEvent[] = [];
  for await (const ev of events) out.push(ev);
  return out;
}

/**
 * Events with ids (messages, tool messages, runs, threads) replaced by their
 * order of appearance, and what differs by construction dropped: the
 * `values` keys the gateway adds to a thread's state (`thread_data`, …) and
 * per-message bookkeeping (`additional_kwargs`, `response_metadata`).
 */
function normalised(raw: ClientStreamEvent[]): unknown[] {
  // The gateway sends the AI deltas of one tick as one frame (its message coalescer); the embedded client yields
  // each: the text per message id is the same, so consecutive plain deltas of one message are joined on both sides.
  const events: ClientStreamEvent[] = [];
  for (const e of raw) {
    const prev = events.at(-1);
    const plain = (x: ClientStreamEvent | undefined): x is Extract<ClientStreamEvent, { type: "messages-tuple" }> =>
      x?.type === "messages-tuple" && x.data.type === "ai" && !("tool_calls" in x.data) && !("usage_metadata" in x.data);
    if (plain(prev) && plain(e) && prev.data.id === e.data.id) {
      events[events.length - 1] = { type: "messages-tuple", data: { ...prev.data, content: String(prev.data.content) + String(e.data.content) } };
    } else events.push(e);
  }
  const ids = new Map<string, string>();
  const id = (v: unknown) => {
    if (typeof v !== "string") return v;
    if (!ids.has(v)) ids.set(v, `#${ids.size}`);
    return ids.get(v);
  };
  const message = (m: Record<string, unknown>) => {
    const { additional_kwargs: _k, response_metadata: _r, usage_metadata: _u, ...rest } = m;
    return { ...rest, id: id(m.id) };
  };
  return events.map((e) => {
    if (e.type === "values") return { type: "values", messages: e.data.messages.map(message), title: e.data.title, artifacts: e.data.artifacts };
    if (e.type === "messages-tuple") return { type: e.type, data: { ...e.data, id: id(e.data.id) } };
    if (e.type === "end") return { type: "end", usage: e.data.usage, status: e.data.status };
    return e;
  });
}

describe("RemoteDeerFlowClient against a gateway without sign-in", () => {
  let gw: TestGateway;
  let remote: RemoteDeerFlowClient;
  let work: string;
  beforeAll(async () => {
    gw = await startTestGateway({ steps: [...TURN, "Second answer.", ...TURN] });
    remote = new RemoteDeerFlowClient({ baseUrl: gw.url });
    work = fs.mkdtempSync(path.join(os.tmpdir(), "remote-client-files-"));
  });
  afterAll(async () => {
    await remote?.close();
    await gw?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("streams the same events as the embedded client for the same scripted run", async () => {
    const events = await collect(remote.stream("hello", { threadId: "remote-parity" }));
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "end", data: { thread_id: "remote-parity", status: "success", usage: { input_tokens: expect.any(Number), total_tokens: expect.any(Number) } } });
    expect((end.data as { run_id: string }).run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(events).toContainEqual({ type: "custom", data: { type: "echo_progress", text: "remote" } });

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "remote-parity-embedded-"));
    const model = new ScriptedModel(TURN);
    const checkpointer = new MemoryCheckpointStore();
    const embedded = new DeerFlowClient({
      dataDir,
      checkpointer,
      agentFactory: () => createAgent({ model, tools: [echoTool, sleepTool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    try {
      const local = await collect(embedded.stream("hello", { threadId: "remote-parity" }));
      expect(normalised(events)).toEqual(normalised(local));
      expect((end.data as { usage: unknown }).usage).toEqual((local.at(-1)!.data as { usage: unknown }).usage);
    } finally {
      await embedded.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("continues the thread without re-emitting earlier messages; chat() answers the final text", async () => {
    const events = await collect(remote.stream("again", { threadId: "remote-parity" }));
    const texts = events.filter((e) => e.type === "messages-tuple" && e.data.type === "ai").map((e) => (e as { data: { content: string } }).data.content);
    expect(texts.join("")).toBe("Second answer.");
    expect(await remote.chat("third", { threadId: "remote-parity" })).toBe("Final answer.");
    const messages = await remote.getMessages("remote-parity");
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "human", "ai", "human", "ai", "tool", "ai"]);
  });

  it("lists, reads, uploads, serves artifacts, keeps memory, reads MCP and models, deletes", async () => {
    const listed = await remote.listThreads(10);
    expect(listed.map((t) => t.thread_id)).toContain("remote-parity");
    const thread = await remote.getThread("remote-parity");
    expect((thread.values as { messages: unknown[] }).messages).toHaveLength(10);
    expect(await remote.getMessages("never-created")).toEqual([]);
    await expect(remote.getThread("never-created")).rejects.toMatchObject({ status: 404, code: "http_404" });

    fs.writeFileSync(path.join(work, "brief.md"), "# Brief\n");
    const up = await remote.uploadFiles("remote-parity", [path.join(work, "brief.md")]);
    expect(up).toMatchObject({ success: true, files: [{ filename: "brief.md", virtual_path: "/mnt/user-data/uploads/brief.md" }] });
    expect((await remote.listUploads("remote-parity")).count).toBe(1);
    expect(await remote.deleteUpload("remote-parity", "brief.md")).toMatchObject({ success: true });
    expect((await remote.listUploads("remote-parity")).count).toBe(0);

    const outputs = path.join(threadPaths(gw.dataDir, "default", "remote-parity").userData, "outputs");
    fs.mkdirSync(outputs, { recursive: true });
    fs.writeFileSync(path.join(outputs, "report.md"), "# Report\n");
    expect(await remote.getArtifact("remote-parity", "/mnt/user-data/outputs/report.md")).toEqual({ bytes: Buffer.from("# Report\n"), mimeType: "text/markdown" });
    await expect(remote.getArtifact("remote-parity", "/mnt/user-data/outputs/missing.md")).rejects.toMatchObject({ status: 404 });

    const fact = await remote.createMemoryFact("Prefers concise answers", "preference", 0.9);
    expect(fact.facts.map((f) => f.content)).toContain("Prefers concise answers");
    expect((await remote.getMemory()).facts).toHaveLength(1);
    expect((await remote.getMemoryStatus()).data.facts).toHaveLength(1);
    expect((await remote.clearMemory()).facts).toEqual([]);

    expect(await remote.getMcpConfig()).toHaveProperty("mcp_servers");
    expect(await remote.getMcpStatus()).toEqual({ servers: expect.any(Array) });
    expect(await remote.listModels()).toEqual({ models: expect.any(Array), token_usage: { enabled: expect.any(Boolean) } });
    expect(await remote.getCurrentUser()).toEqual({ id: "default", email: "default@test.local", system_role: "admin", needs_setup: false, oauth_provider: null });

    await remote.deleteThread("remote-parity");
    await expect(remote.getThread("remote-parity")).rejects.toBeInstanceOf(RemoteHttpError);
    await expect(remote.deleteThread("remote-parity")).rejects.toMatchObject({ status: 404 });
  });
});

/** Mint a personal access token as the signed-in account. */
async function mintToken(who: SignedIn, name: string, scopes: string[]): Promise<{ id: string; token: string }> {
  return who.json("POST", "/v1/auth/tokens", { name, scopes }, 201);
}

describe("RemoteDeerFlowClient with personal access tokens", () => {
  let gw: AuthGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it("a run token chats and streams; a read token lists but cannot start a run; another user sees nothing; a revoked token is refused", async () => {
    gw = await startAuthGateway({ steps: [...TURN, "Streamed."] });
    const admin = await initializeAdmin(gw.api);
    const runToken = await mintToken(admin, "laptop", ["run"]);
    const readToken = await mintToken(admin, "dashboard", ["read"]);
    expect(runToken.token).toMatch(/^dfp_/);

    // without a token: a GET is 401, a POST meets DeerFlow's CSRF check first (403); both say to pass a token
    const anonymous = new RemoteDeerFlowClient({ baseUrl: gw.url });
    await expect(anonymous.getCurrentUser()).rejects.toMatchObject({ status: 401, code: "not_authenticated", message: expect.stringMatching(/^The server requires sign-in/) });
    await expect(anonymous.listThreads()).rejects.toMatchObject({ status: 403, code: "not_authenticated", message: expect.stringMatching(/^The server requires sign-in: CSRF token missing/) });

    const runner = new RemoteDeerFlowClient({ baseUrl: gw.url, token: runToken.token });
    expect(await runner.getCurrentUser()).toMatchObject({ email: "admin@example.com", system_role: "admin" });
    expect(await runner.chat("hello", { threadId: "pat-thread" })).toBe("Final answer.");
    const streamed = await collect(runner.stream("more", { threadId: "pat-thread" }));
    expect(streamed.at(-1)).toMatchObject({ type: "end", data: { status: "success", thread_id: "pat-thread" } });
    expect(streamed.filter((e) => e.type === "messages-tuple").map((e) => (e.data as { content: unknown }).content).join("")).toBe("Streamed.");

    // a multipart write with the token alone (no cookie, no CSRF header) is accepted
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "remote-pat-"));
    try {
      fs.writeFileSync(path.join(dir, "plan.txt"), "the plan");
      const up = await runner.uploadFiles("pat-thread", [path.join(dir, "plan.txt")]);
      expect(up.files.map((f) => f.filename)).toEqual(["plan.txt"]);
      expect((await runner.listUploads("pat-thread")).count).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }

    const reader = new RemoteDeerFlowClient({ baseUrl: gw.url, token: readToken.token });
    expect((await reader.listThreads()).map((t) => t.thread_id)).toEqual(["pat-thread"]);
    expect((await reader.getMessages("pat-thread")).length).toBe(6);
    const refused = await collect(reader.stream("may I?", { threadId: "pat-thread" })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RemoteAuthError);
    expect(refused).toMatchObject({ status: 403, code: "insufficient_scope", requiredScope: "run" });
    expect((refused as Error).message).toMatch(/^The token lacks scope run: /);
    expect((refused as Error).message).not.toContain(readToken.token);
    // nothing ran: the thread still has the two turns of the run token
    expect((await reader.getMessages("pat-thread")).length).toBe(6);

    // another user's token: the admin's thread does not exist for them, and their list is empty
    const bob = await addUser(admin, "bob@example.com");
    const bobClient = new RemoteDeerFlowClient({ baseUrl: gw.url, token: (await mintToken(bob, "bob", ["run"])).token });
    expect(await bobClient.listThreads()).toEqual([]);
    await expect(bobClient.getThread("pat-thread")).rejects.toMatchObject({ status: 404 });
    await expect(bobClient.getMessages("pat-thread")).resolves.toEqual([]);

    await admin.json("DELETE", `/v1/auth/tokens/${runToken.id}`);
    const revoked = await runner.listThreads().catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(RemoteAuthError);
    expect(revoked).toMatchObject({ status: 401, code: "token_refused" });
    expect((revoked as Error).message).toMatch(/^The token was refused/);
    expect((revoked as Error).message).not.toContain(runToken.token);
    await expect(collect(runner.stream("after revoke", { threadId: "pat-thread" }))).rejects.toMatchObject({ code: "token_refused" });
    // the read token still works
    expect(await reader.listThreads()).toHaveLength(1);
  });

  it("the LangGraph SDK with defaultHeaders Authorization: Bearer runs with a run token; with a read token it searches but cannot run", async () => {
    gw = await startAuthGateway({ steps: ["SDK answer."] });
    const admin = await initializeAdmin(gw.api);
    const run = await mintToken(admin, "sdk-run", ["run"]);
    const read = await mintToken(admin, "sdk-read", ["read"]);

    const sdk = new Client({ apiUrl: `${gw.url}/api/langgraph`, defaultHeaders: { Authorization: `Bearer ${run.token}` } });
    const thread = await sdk.threads.create({ metadata: { origin: "sdk" } });
    const events: string[] = [];
    for await (const part of sdk.runs.stream(thread.thread_id, "lead_agent", { input: humanInput("hi sdk"), streamMode: ["values"] })) events.push(part.event);
    expect(events[0]).toBe("metadata");
    expect(events).toContain("values");
    const state = await sdk.threads.getState(thread.thread_id);
    expect((state.values as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content).toBe("SDK answer.");

    const readOnly = new Client({ apiUrl: `${gw.url}/api/langgraph`, defaultHeaders: { Authorization: `Bearer ${read.token}` } });
    expect((await readOnly.threads.search({ limit: 10 })).map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect((await readOnly.threads.getHistory(thread.thread_id, { limit: 1 })).length).toBe(1);
    const denied = await (async () => {
      for await (const _ of readOnly.runs.stream(thread.thread_id, "lead_agent", { input: humanInput("no") })) void _;
    })().catch((e: unknown) => e);
    expect(String((denied as Error)?.message ?? denied)).toMatch(/403/);
    expect(String((denied as Error)?.message ?? denied)).toMatch(/scope/);

    const anonymous = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    await expect(anonymous.threads.get(thread.thread_id)).rejects.toThrow(/401|not_authenticated/i);
  });
});
