import fs from "node:fs";
import path from "node:path";
import { threadDirs } from "../../src/sandbox";
import { describe, expect, it } from "vitest";
import { call, FIXTURES, makePool, nodeServer, toolRuntime } from "./_helpers";

const PICKY = path.join(FIXTURES, "thread-picky-server.mjs");
const SECRET = "Alice's diary: the merger closes on Friday";

describe("one user's MCP session failure stays that user's", () => {
  it("a stdio session that fails in A's thread (quoting A's file) neither shows in the server status nor reaches B, whose session still works", async () => {
    const h = makePool({ picky: nodeServer(PICKY, ["/mnt/user-data/workspace"]) }, { retryInitialMs: 60_000 });
    try {
      const tools = await h.pool.getTools();
      expect(tools.map((t) => t.name)).toContain("picky_echo");
      const a = threadDirs(path.join(h.dir, "data"), "thread-a", "user-a");
      fs.mkdirSync(a.workspace, { recursive: true });
      fs.writeFileSync(path.join(a.workspace, "diary.txt"), SECRET);

      // A's own call fails with A's own error
      const mine = await call(tools, "picky_echo", { text: "hi" }, toolRuntime("thread-a", "user-a"));
      expect(mine.status).toBe("error");

      // nothing of it is shared: the status every user reads, and B's call in B's thread
      const status = h.pool.status().find((s) => s.name === "picky")!;
      expect(JSON.stringify(status)).not.toContain("merger");
      expect(status.state).toBe("connected");
      const theirs = await call(tools, "picky_echo", { text: "from bob" }, toolRuntime("thread-b", "user-b"));
      expect(String(theirs.content)).not.toContain("merger");
      expect(theirs).toMatchObject({ status: expect.not.stringMatching(/error/), content: "echo: from bob" });
    } finally {
      await h.cleanup();
    }
  });
});

/**
 * A stateful streamable-HTTP MCP server (official SDK) whose `remember` and
 * `recall` keep a note per MCP session, as a browser or scratchpad server
 * keeps what one session did.
 */
async function startStatefulHttpServer() {
  const { createServer } = await import("node:http");
  const { randomUUID } = await import("node:crypto");
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const { z } = await import("zod");
  const transports = new Map<string, InstanceType<typeof StreamableHTTPServerTransport>>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = typeof sid === "string" ? transports.get(sid) : undefined;
    if (!transport) {
      let note = "";
      const mcp = new McpServer({ name: "stateful", version: "1.0.0" });
      mcp.registerTool("remember", { description: "Keep a note in this session.", inputSchema: { text: z.string() } }, async ({ text }) => {
        note = text;
        return { content: [{ type: "text", text: "kept" }] };
      });
      mcp.registerTool("recall", { description: "The note of this session.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: `note=${note}` }] }));
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => void transports.set(id, created) });
      transport = created;
      await mcp.connect(created);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, sessions: () => transports.size, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

describe("remote MCP sessions are per user", () => {
  it("what A's calls left in a remote server's session is not in B's: each user talks to the server in a session of their own", async () => {
    const remote = await startStatefulHttpServer();
    const h = makePool({ notes: { type: "http", url: remote.url } });
    try {
      const tools = await h.pool.getTools();
      expect((await call(tools, "notes_remember", { text: SECRET }, toolRuntime("thread-a", "user-a"))).content).toBe("kept");
      // A keeps its own session (also from another of its threads)
      expect((await call(tools, "notes_recall", {}, toolRuntime("thread-a2", "user-a"))).content).toBe(`note=${SECRET}`);
      expect((await call(tools, "notes_recall", {}, toolRuntime("thread-b", "user-b"))).content).toBe("note=");
      // discovery, A and B: one session each; concurrent first calls of a new user share one opening
      expect(remote.sessions()).toBe(3);
      await Promise.all([1, 2, 3, 4].map((i) => call(tools, "notes_recall", {}, toolRuntime(`thread-c${i}`, "user-c"))));
      expect(remote.sessions()).toBe(4);
    } finally {
      await h.cleanup();
      await remote.close();
    }
  });
});
