/**
 * Two users on one gateway with sign-in on: A (the first admin) builds up a
 * thread with runs, a file a tool wrote, an upload, memory, a custom agent, a
 * custom skill and a profile; B (a registered user) and C (a second admin)
 * then try every route family on A's things. Every foreign access is 404
 * (admin-only routes answer a user 403 before anything is looked up), nothing
 * of A's is listed for them, and A still sees all of it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { contentText, createAgent, MemoryCheckpointStore, MemoryService, SkillRegistry, threadPaths, threadStateSchema, tool } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createGateway } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { MCP_ADMIN_REQUIRED } from "../../src/routes/mcp";
import { SKILLS_ADMIN_REQUIRED } from "../../src/routes/skills";
import { echoTool, humanInput, parseSse, until } from "../helpers/test-gateway";
import { authOn, initializeAdmin, login, registerUser } from "./signed-in";
import type { Session } from "./signed-in";

const PASSWORD = "Isolation-Pass-42";
const SECRET_REPORT = "A's quarterly numbers: 1234";
const SECRET_FACT = "User A keeps the launch codes in the blue folder";

const enc = (s: string) => new TextEncoder().encode(s);
const skillMd = (name: string, desc: string) => enc(`---\nname: ${name}\ndescription: ${desc}\n---\n# ${name}\n`);

/** Writes a file into the run's own outputs folder, as the sandbox file tools do (`users/{user_id}/threads/{thread_id}`). */
function writeReportTool(dataDir: string) {
  return tool({
    name: "write_report",
    description: "Write a report into the thread's outputs",
    schema: z.object({ name: z.string(), text: z.string() }),
    execute: ({ name, text }, rt) => {
      const outputs = threadPaths(dataDir, String(rt.context.user_id), String(rt.context.thread_id)).outputs;
      fs.mkdirSync(outputs, { recursive: true });
      fs.writeFileSync(path.join(outputs, name), text);
      return `wrote /mnt/user-data/outputs/${name}`;
    },
  });
}

/** Holds its run open until the run is cancelled (no timer: the test cancels it). */
const holdTool = tool({
  name: "hold",
  description: "Wait until cancelled",
  schema: z.object({}),
  execute: (_args, rt) =>
    new Promise<string>((_resolve, reject) => {
      rt.signal.addEventListener("abort", () => reject(rt.signal.reason ?? new Error("aborted")), { once: true });
    }),
});

describe("cross-user isolation over every route family (real gateway, sign-in on)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gw-isolation-"));
  const dataDir = path.join(root, "data");
  const skillsPath = path.join(root, "skills");
  const extensionsPath = path.join(root, "extensions_config.json");
  let gateway: Gateway;
  let memory: MemoryService;
  let api: string;
  let A: Session;
  let B: Session;
  let C: Session;
  /** A's thread, its finished runs, its live run, a checkpoint, a fact, a branch. */
  const a = { thread: "", run: "", liveRun: "", checkpoint: "", fact: "", aiMessage: "", branch: "" };
  const b = { thread: "", run: "" };

  beforeAll(async () => {
    fs.mkdirSync(path.join(skillsPath, "public", "shared-skill"), { recursive: true });
    fs.writeFileSync(path.join(skillsPath, "public", "shared-skill", "SKILL.md"), skillMd("shared-skill", "Everyone's."));
    fs.writeFileSync(extensionsPath, JSON.stringify({ mcpServers: {}, skills: {} }));
    const checkpointer = new MemoryCheckpointStore();
    // One model for every run, answering by what the run was asked (runs of A and B may interleave).
    const model = new ScriptedModel(
      [
        (request) => {
          const last = request.messages[request.messages.length - 1];
          if (last.type === "tool") return last.content.toString().startsWith("wrote") ? "Report written for A." : "Done.";
          const asked = contentText(last.content);
          if (asked.includes("write my report")) return { text: "Writing it.", toolCalls: [{ name: "write_report", args: { name: "report.md", text: SECRET_REPORT }, id: "w1" }] };
          if (asked.includes("hold on")) return { text: "Holding.", toolCalls: [{ name: "hold", args: {}, id: "h1" }] };
          return "Hello.";
        },
      ],
      { onExhausted: "repeat-last" },
    );
    gateway = await createGateway({
      dataDir,
      checkpointer,
      webDistDir: null,
      agentsApiEnabled: true,
      skills: new SkillRegistry({ skillsPath, dataDir, extensionsPath }),
      auth: authOn({ registration_enabled: true }),
      log: () => undefined,
      agentFactory: () => createAgent({ model, tools: [writeReportTool(dataDir), holdTool, echoTool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    // The memory service the routes use (as attachMemory would provide), so the test can see its updater.
    memory = new MemoryService({ config: {}, dataDir, logger: { warn: () => undefined } });
    gateway.runtime.extensions.memory = memory;
    api = `${await gateway.start({ port: 0 })}/api`;

    A = await initializeAdmin(api, "alice@example.com", PASSWORD);
    B = await registerUser(api, "bob@example.com", PASSWORD);
    await A.json("POST", "/v1/auth/users", { email: "carol@example.com", password: PASSWORD, system_role: "admin" }, 201);
    C = await login(api, "carol@example.com", PASSWORD);

    // A: a thread with a run whose tool wrote a file, an upload, a custom skill from it, memory, an agent, a profile
    a.thread = (await A.json("POST", "/threads", { metadata: { title_hint: "alice-only" } })).thread_id;
    await A.json("POST", `/threads/${a.thread}/runs/wait`, { input: humanInput("write my report") });
    a.run = (await A.json("GET", `/threads/${a.thread}/runs`))[0].run_id;
    const state = await A.json("GET", `/threads/${a.thread}/state`);
    a.checkpoint = state.checkpoint.checkpoint_id;
    a.aiMessage = [...state.values.messages].reverse().find((m: { type: string }) => m.type === "ai").id;
    expect((await A.upload(`/threads/${a.thread}/uploads`, { "notes.txt": "A's private notes", "private.skill": zipSync({ "alice-skill/SKILL.md": skillMd("alice-skill", "Alice's own.") }) })).status).toBe(200);
    await A.json("POST", "/skills/install", { thread_id: a.thread, path: "/mnt/user-data/uploads/private.skill" });
    a.fact = (await A.json("POST", "/memory/facts", { content: SECRET_FACT, category: "context", confidence: 0.9 })).facts[0].id;
    await A.json("POST", "/agents", { name: "alice-agent", description: "Alice's helper", soul: "You serve Alice." }, 201);
    await A.json("PUT", "/user-profile", { content: "Alice, likes graphs" });
    a.branch = (await A.json("POST", `/threads/${a.thread}/branches`, { message_id: a.aiMessage })).thread_id;

    // A: a run that stays live (its stream is read until the hold tool is running)
    const live = await A.send("POST", `/threads/${a.thread}/runs`, { input: humanInput("hold on"), on_disconnect: "continue" });
    a.liveRun = ((await live.json()) as { run_id: string }).run_id;

    // B: a thread and a run of its own
    b.thread = (await B.json("POST", "/threads", {})).thread_id;
    await B.json("POST", `/threads/${b.thread}/runs/wait`, { input: humanInput("hi") });
    b.run = (await B.json("GET", `/threads/${b.thread}/runs`))[0].run_id;
  });

  afterAll(async () => {
    await gateway.close();
    await memory.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Every request answers 404. */
  const all404 = async (who: Session, requests: Array<[string, string, unknown?]>) => {
    for (const [method, route, body] of requests) {
      const res = await who.send(method, route, body ?? (["POST", "PUT", "PATCH"].includes(method) ? {} : undefined));
      expect([method, route, res.status, await res.text()]).toEqual([method, route, 404, expect.any(String)]);
    }
  };

  it("threads: get, patch, delete, state, checkpoint state, history, transcript, token usage, suggestions are 404; search and count list only one's own", async () => {
    for (const who of [B, C]) {
      await all404(who, [
        ["GET", `/threads/${a.thread}`],
        ["PATCH", `/threads/${a.thread}`, { metadata: { stolen: true } }],
        ["GET", `/threads/${a.thread}/state`],
        ["GET", `/threads/${a.thread}/state/${a.checkpoint}`],
        ["POST", `/threads/${a.thread}/state`, { values: { title: "pwned" } }],
        ["POST", `/threads/${a.thread}/history`, {}],
        ["GET", `/threads/${a.thread}/messages/page`],
        ["GET", `/threads/${a.thread}/token-usage`],
        ["POST", `/threads/${a.thread}/suggestions`, { messages: [] }],
        ["DELETE", `/threads/${a.thread}`],
        ["GET", `/langgraph/threads/${a.thread}`],
      ]);
      const listed = (await who.json("POST", "/threads/search", { limit: 100 })) as Array<{ thread_id: string }>;
      expect(listed.map((t) => t.thread_id)).not.toContain(a.thread);
      expect(listed.map((t) => t.thread_id)).not.toContain(a.branch);
      expect(await who.json("POST", "/threads/search", { metadata: { title_hint: "alice-only" } })).toEqual([]);
      expect(await who.json("POST", "/threads/count", {})).toBe(listed.length);
    }
    const bThreads = (await B.json("POST", "/threads/search", {})) as Array<{ thread_id: string }>;
    expect(bThreads.map((t) => t.thread_id)).toEqual([b.thread]);
    // creating a thread under A's id is refused, and A's thread is untouched
    expect((await B.send("POST", "/threads", { thread_id: a.thread, metadata: { owner: "bob" } })).status).toBe(409);
    expect((await A.json("GET", `/threads/${a.thread}`)).metadata).toMatchObject({ title_hint: "alice-only" });
  });

  it("runs: create, stream, wait, list, get, join, cancel are 404, also for A's run id asked under one's own thread; A's live run keeps running", async () => {
    for (const who of [B, C]) {
      await all404(who, [
        ["POST", `/threads/${a.thread}/runs`, { input: humanInput("x") }],
        ["POST", `/threads/${a.thread}/runs/stream`, { input: humanInput("x") }],
        ["POST", `/threads/${a.thread}/runs/wait`, { input: humanInput("x") }],
        ["POST", "/runs/wait", { input: humanInput("x"), config: { configurable: { thread_id: a.thread } } }],
        ["POST", "/runs/stream", { input: humanInput("x"), config: { configurable: { thread_id: a.thread } } }],
        ["GET", `/threads/${a.thread}/runs`],
        ["GET", `/threads/${a.thread}/runs/${a.run}`],
        ["GET", `/threads/${a.thread}/runs/${a.liveRun}/join`],
        ["GET", `/threads/${a.thread}/runs/${a.liveRun}/stream`],
        ["POST", `/threads/${a.thread}/runs/${a.liveRun}/cancel`],
        ["POST", `/threads/${a.thread}/runs/${a.liveRun}/stream`],
        ["GET", `/threads/${a.thread}/runs/${a.run}/workspace-changes`],
      ]);
    }
    // A's run ids under B's own thread: still unknown to B
    await all404(B, [
      ["GET", `/threads/${b.thread}/runs/${a.run}`],
      ["GET", `/threads/${b.thread}/runs/${a.liveRun}/join`],
      ["POST", `/threads/${b.thread}/runs/${a.liveRun}/cancel?wait=1`],
      ["GET", `/threads/${b.thread}/runs/${a.run}/workspace-changes`],
    ]);
    expect((await B.json("GET", `/threads/${b.thread}/runs`)).map((r: { run_id: string }) => r.run_id)).toEqual([b.run]);
    // none of that touched A's live run; A cancels it and its join ends
    expect((await A.json("GET", `/threads/${a.thread}/runs/${a.liveRun}`)).status).toBe("running");
    const cancel = await A.send("POST", `/threads/${a.thread}/runs/${a.liveRun}/cancel?wait=1`);
    expect(cancel.status).toBe(204);
    await until(async () => (await A.json("GET", `/threads/${a.thread}/runs/${a.liveRun}`)).status === "interrupted");
  });

  it("uploads and artifacts: list, get, delete and upload into A's thread are 404; A's files are not under another user's copy of the thread", async () => {
    for (const who of [B, C]) {
      await all404(who, [
        ["GET", `/threads/${a.thread}/uploads/list`],
        ["GET", `/threads/${a.thread}/uploads/limits`],
        ["DELETE", `/threads/${a.thread}/uploads/notes.txt`],
        ["GET", `/threads/${a.thread}/artifacts/mnt/user-data/outputs/report.md`],
        ["GET", `/threads/${a.thread}/artifacts/mnt/user-data/uploads/notes.txt`],
      ]);
      const up = await who.upload(`/threads/${a.thread}/uploads`, { "planted.txt": "from someone else" });
      expect(up.status).toBe(404);
    }
    // the same virtual paths under B's own thread are B's (empty) folder
    await all404(B, [
      ["GET", `/threads/${b.thread}/artifacts/mnt/user-data/outputs/report.md`],
      ["GET", `/threads/${b.thread}/artifacts/mnt/user-data/uploads/notes.txt`],
    ]);
    expect((await B.json("GET", `/threads/${b.thread}/uploads/list`)).files).toEqual([]);
    // nothing was planted in, or removed from, A's folder
    expect(fs.readdirSync(threadPaths(dataDir, await userId(A), a.thread).uploads).sort()).toEqual(["notes.txt", "private.skill"]);
  });

  it("workspace changes: A's run is 404 for others, B's own run does not show A's file", async () => {
    const own = await B.json("GET", `/threads/${b.thread}/runs/${b.run}/workspace-changes`);
    expect(JSON.stringify(own)).not.toContain("report.md");
    const mine = await A.json("GET", `/threads/${a.thread}/runs/${a.run}/workspace-changes`);
    expect(mine.available).toBe(true);
    expect(JSON.stringify(mine)).toContain("report.md");
  });

  it("regenerate, edit-regenerate and branches of A's thread are 404; A's branch is not listed for others", async () => {
    for (const who of [B, C]) {
      await all404(who, [
        ["POST", `/threads/${a.thread}/runs/regenerate/prepare`, { message_id: a.aiMessage }],
        ["POST", `/threads/${a.thread}/runs/edit-regenerate/prepare`, { human_message_id: "x", replacement_text: "y" }],
        ["POST", `/threads/${a.thread}/branches`, { message_id: a.aiMessage }],
        ["GET", `/threads/${a.branch}`],
        ["GET", `/threads/${a.branch}/artifacts/mnt/user-data/outputs/report.md`],
      ]);
    }
  });

  it("memory: another user's memory, export, facts and status hold none of A's facts; deleting A's fact is 404; clearing one's own leaves A's", async () => {
    for (const who of [B, C]) {
      for (const route of ["/memory", "/memory/export", "/memory/status", "/memory/threads", "/memory/relations"]) {
        expect(JSON.stringify(await who.json("GET", route)), route).not.toContain(SECRET_FACT);
      }
      expect((await who.send("DELETE", `/memory/facts/${a.fact}`)).status).toBe(404);
      expect((await who.send("PATCH", `/memory/facts/${a.fact}`, { content: "overwritten" })).status).toBe(404);
      const recall = await who.json("POST", "/memory/recall", { query: "launch codes blue folder", thread_id: a.thread });
      expect(JSON.stringify(recall)).not.toContain(SECRET_FACT);
      await who.json("DELETE", "/memory");
      await who.json("PUT", "/memory/settings", { enabled: false });
    }
    // the shared updater's last error may quote the conversation it failed on: only an admin sees it
    (memory as unknown as { updater: { status: { lastError: string | null } } }).updater.status.lastError = `could not parse: "${SECRET_FACT}"`;
    expect((await B.json("GET", "/memory/status")).updater.lastError).toBeNull();
    expect((await C.json("GET", "/memory/status")).updater.lastError).toContain(SECRET_FACT);
    expect((await A.json("GET", "/memory")).facts.map((f: { content: string }) => f.content)).toEqual([SECRET_FACT]);
    expect(await A.json("GET", "/memory/settings")).toEqual({ enabled: true });
  });

  it("custom agents and the user profile: get, put, delete are 404, the list and name check are one's own", async () => {
    for (const who of [B, C]) {
      await all404(who, [
        ["GET", "/agents/alice-agent"],
        ["PUT", "/agents/alice-agent", { soul: "You serve Bob." }],
        ["DELETE", "/agents/alice-agent"],
      ]);
      expect((await who.json("GET", "/agents")).agents).toEqual([]);
      expect(await who.json("GET", "/agents/check?name=alice-agent")).toEqual({ available: true, name: "alice-agent" });
      expect(await who.json("GET", "/user-profile")).toEqual({ content: null });
    }
    // B's own agent of the same name is B's, and A's stays as it was
    await B.json("POST", "/agents", { name: "alice-agent", soul: "Bob's copy." }, 201);
    expect((await A.json("GET", "/agents/alice-agent")).soul).toBe("You serve Alice.");
    expect((await B.json("GET", "/agents/alice-agent")).soul).toBe("Bob's copy.");
    await B.json("PUT", "/user-profile", { content: "Bob" });
    expect(await A.json("GET", "/user-profile")).toEqual({ content: "Alice, likes graphs" });
  });

  it("skills: A's custom skill is not listed or readable for others; a user may not install, reload or change public skills (403), another admin gets 404 for A's skill", async () => {
    for (const who of [B, C]) {
      const names = (await who.json("GET", "/skills")).skills.map((s: { name: string }) => s.name);
      expect(names).toEqual(["shared-skill"]);
      expect((await who.json("GET", "/skills/custom")).skills).toEqual([]);
      await all404(who, [
        ["GET", "/skills/alice-skill"],
        ["GET", "/skills/alice-skill/content"],
        ["PUT", "/skills/alice-skill", { enabled: false }],
      ]);
    }
    // a user: the admin-only skill routes answer 403 with DeerFlow's text, whatever the target
    for (const [method, route, body] of [
      ["POST", "/skills/install", { thread_id: a.thread, path: "/mnt/user-data/uploads/private.skill" }],
      ["POST", "/skills/reload", {}],
      ["GET", "/skills/custom/alice-skill", undefined],
      ["DELETE", "/skills/custom/alice-skill", undefined],
      ["PUT", "/skills/shared-skill", { enabled: false }],
    ] as const) {
      const res = await B.send(method, route, body);
      expect([route, res.status, await res.json()]).toEqual([route, 403, { detail: SKILLS_ADMIN_REQUIRED }]);
    }
    // another admin: A's custom skill and A's thread do not exist for C
    await all404(C, [
      ["GET", "/skills/custom/alice-skill"],
      ["DELETE", "/skills/custom/alice-skill"],
      ["POST", "/skills/install", { thread_id: a.thread, path: "/mnt/user-data/uploads/private.skill" }],
    ]);
    // A still has it, enabled
    expect((await A.json("GET", "/skills/alice-skill")).enabled).toBe(true);
    expect((await A.json("GET", "/skills/custom/alice-skill")).content).toContain("name: alice-skill");
  });

  it("MCP: configuration reads and writes are admin-only (403 for a user, DeerFlow's text); an admin reads it", async () => {
    for (const [method, route, body] of [
      ["GET", "/mcp/config", undefined],
      ["PUT", "/mcp/config", { mcp_servers: { evil: { type: "stdio", command: "sh", args: ["-c", "id"] } } }],
      ["PATCH", "/mcp/config", { server_name: "x", enabled: true }],
      ["POST", "/mcp/cache/reset", {}],
    ] as const) {
      const res = await B.send(method, route, body);
      expect([route, res.status, await res.json()]).toEqual([route, 403, { detail: MCP_ADMIN_REQUIRED }]);
    }
    expect(await A.json("GET", "/mcp/config")).toEqual({ mcp_servers: {} });
    expect((await B.json("GET", "/mcp/status")).servers).toEqual([]);
  });

  it("a run cannot name its user: a user_id in the request's context or configurable is ignored", async () => {
    const [aId, bId] = [await userId(A), await userId(B)];
    const spoofed = { input: humanInput("write my report"), context: { user_id: aId }, config: { configurable: { user_id: aId } } };
    await B.json("POST", `/threads/${b.thread}/runs/wait`, spoofed);
    // the tool wrote where the run's context said: B's folder, not A's
    expect(fs.readFileSync(path.join(threadPaths(dataDir, bId, b.thread).outputs, "report.md"), "utf8")).toBe(SECRET_REPORT);
    expect(fs.existsSync(threadPaths(dataDir, aId, b.thread).userData)).toBe(false);
    const runs = (await B.json("GET", `/threads/${b.thread}/runs`)) as Array<{ run_id: string }>;
    expect(runs).toHaveLength(2);
    expect((await A.send("GET", `/threads/${b.thread}/runs/${runs[0].run_id}`)).status).toBe(404);
  });

  it("A's checkpoint ids under one's own thread are unknown: state, history and runs from them are 404 or empty", async () => {
    expect((await B.send("GET", `/threads/${b.thread}/state/${a.checkpoint}`)).status).toBe(404);
    expect((await B.send("POST", `/threads/${b.thread}/runs/wait`, { input: humanInput("x"), checkpoint_id: a.checkpoint })).status).toBe(404);
    const history = await B.json("POST", `/threads/${b.thread}/history`, { before: a.checkpoint });
    expect(JSON.stringify(history)).not.toContain("Report written for A.");
  });

  it("a personal access token is its user: B's run-scoped token gets 404 on A's thread and lists only B's", async () => {
    const { token } = await B.json("POST", "/v1/auth/tokens", { name: "cli", scopes: ["run"] }, 201);
    const bearer = (method: string, route: string, body?: unknown) =>
      fetch(`${api}${route}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
    for (const [method, route, body] of [
      ["GET", `/threads/${a.thread}`],
      ["GET", `/threads/${a.thread}/state`],
      ["POST", `/threads/${a.thread}/history`, {}],
      ["POST", `/threads/${a.thread}/runs/wait`, { input: humanInput("x") }],
      ["GET", `/threads/${a.thread}/runs/${a.run}/join`],
      ["GET", `/threads/${a.thread}/artifacts/mnt/user-data/outputs/report.md`],
    ] as Array<[string, string, unknown?]>) {
      const res = await bearer(method, route, body);
      expect([route, res.status]).toEqual([route, 404]);
      await res.body?.cancel();
    }
    const listed = (await (await bearer("POST", "/threads/search", {})).json()) as Array<{ thread_id: string }>;
    expect(listed.map((t) => t.thread_id)).toEqual([b.thread]);
  });

  it("A still sees all of its own: thread, runs, files, upload, branch, transcript", async () => {
    expect((await A.json("GET", `/threads/${a.thread}`)).thread_id).toBe(a.thread);
    expect((await A.json("GET", `/threads/${a.thread}/runs`)).map((r: { run_id: string }) => r.run_id)).toEqual(expect.arrayContaining([a.run, a.liveRun]));
    const report = await A.send("GET", `/threads/${a.thread}/artifacts/mnt/user-data/outputs/report.md`);
    expect(await report.text()).toBe(SECRET_REPORT);
    expect((await A.json("GET", `/threads/${a.thread}/uploads/list`)).files.map((f: { filename: string }) => f.filename).sort()).toEqual(["notes.txt", "private.skill"]);
    const branchFile = await A.send("GET", `/threads/${a.branch}/artifacts/mnt/user-data/outputs/report.md`);
    expect(await branchFile.text()).toBe(SECRET_REPORT);
    const listed = (await A.json("POST", "/threads/search", {})).map((t: { thread_id: string }) => t.thread_id);
    expect(listed.sort()).toEqual([a.thread, a.branch].sort());
    expect(await A.json("POST", "/threads/count", {})).toBe(2);
    const page = await A.json("GET", `/threads/${a.thread}/messages/page`);
    expect(JSON.stringify(page)).toContain("Report written for A.");
    const history = await A.json("POST", `/threads/${a.thread}/history`, { limit: 1 });
    expect(history).toHaveLength(1);
    // and the join of a finished run answers at once: its final values (JSON), or its ended stream to an SSE client
    const join = await A.send("GET", `/threads/${a.thread}/runs/${a.run}/join`);
    expect(JSON.stringify(await join.json())).toContain("Report written for A.");
    const joinSse = await A.send("GET", `/threads/${a.thread}/runs/${a.run}/join`, undefined, { accept: "text/event-stream" });
    expect(parseSse(await joinSse.text()).some((f) => f.event === "end")).toBe(true);
  });

  /** The signed-in user's id (`GET /api/v1/auth/me`). */
  async function userId(s: Session): Promise<string> {
    return (await s.json("GET", "/v1/auth/me")).id as string;
  }
});
