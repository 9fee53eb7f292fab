import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapUsable, call, EVERYTHING, FILESYSTEM, FIXTURES, makePool, nodeServer, toolRuntime } from "./_helpers";
import type { PoolHarness } from "./_helpers";
import type { ToolDefinition } from "../../src/tools";

describe("McpPool over stdio with real servers", () => {
  let h: PoolHarness;
  let tools: ToolDefinition[];

  beforeAll(async () => {
    process.env.MCP_STDIO_TEST_VAR = "resolved-from-env";
    h = makePool({
      everything: nodeServer(EVERYTHING, ["stdio"]),
      // Rooted in the thread workspace as the agent sees it: a sandboxed server sees the thread at /mnt/user-data.
      fs: nodeServer(FILESYSTEM, ["/mnt/user-data/workspace"]),
      rich: nodeServer(path.join(FIXTURES, "rich-server.mjs")),
      plain: nodeServer(path.join(FIXTURES, "rich-server.mjs"), [], { tool_name_prefix: false, env: { MCP_ECHO_ENV: "$MCP_STDIO_TEST_VAR" } }),
      off: { ...nodeServer(path.join(FIXTURES, "rich-server.mjs")), enabled: false },
    });
    tools = await h.pool.getTools();
  });
  afterAll(async () => {
    delete process.env.MCP_STDIO_TEST_VAR;
    await h.cleanup();
  });

  it("exposes every tool as {server}_{tool}, unprefixed when tool_name_prefix is false, none of a disabled server", () => {
    const names = tools.map((t) => t.name);
    expect(names).toContain("everything_echo");
    expect(names).toContain("everything_get-tiny-image");
    expect(names).toContain("fs_write_file");
    expect(names).toContain("rich_big");
    expect(names).toContain("where"); // plain
    expect(names.some((n) => n.startsWith("off_"))).toBe(false);
    // an invalid tool name is dropped with a warning, never listed
    expect(names.some((n) => n.includes("!"))).toBe(false);
    expect(h.warnings.some((w) => w.includes("bad name!"))).toBe(true);
    const st = h.pool.status();
    expect(st.find((s) => s.name === "everything")).toMatchObject({ state: "connected", connected: true, last_error: null });
    expect(st.find((s) => s.name === "off")).toMatchObject({ state: "disabled", connected: false, tools: [] });
    const everythingTool = tools.find((t) => t.name === "everything_echo");
    expect(everythingTool?.metadata).toMatchObject({ mcp: true, mcp_server: "everything", mcp_tool: "echo", group: "mcp" });
  });

  it("resolves $VAR in a stdio server's env", async () => {
    const r = await call(tools, "where", {});
    expect((JSON.parse(r.content as string) as { echo_env: string }).echo_env).toBe("resolved-from-env");
  });

  it("calls tools over a pooled session and returns text", async () => {
    const r = await call(tools, "everything_echo", { message: "hello" });
    expect(r.status).toBe("success");
    expect(r.content).toBe("Echo: hello");
  });

  it("turns images into image blocks with a text note", async () => {
    const r = await call(tools, "everything_get-tiny-image", {});
    const blocks = r.content as Array<Record<string, unknown>>;
    expect(Array.isArray(blocks)).toBe(true);
    const img = blocks.find((b) => b.type === "image_url") as { image_url: { url: string } };
    expect(img.image_url.url).toMatch(/^data:image\/png;base64,iVBOR/);
    expect(blocks.some((b) => b.type === "text" && String(b.text).startsWith("[image: image/png"))).toBe(true);
  });

  it("keeps large results whole and structured content as the artifact", async () => {
    const big = await call(tools, "rich_big", { kb: 512 });
    expect(typeof big.content).toBe("string");
    expect((big.content as string).length).toBe(512 * 1024);
    const s = await call(tools, "rich_structured", { a: 2, b: 3 });
    expect(s.artifact).toEqual({ structured_content: { sum: 5 } });
    expect(s.content).toBe('{"sum":5}');
  });

  it("starts a thread's session in the server's own launch directory (sandboxed: /mnt/mcp-server), never in the thread workspace", async () => {
    const r = await call(tools, "rich_where", {}, toolRuntime("thread-a", "alice"));
    const where = JSON.parse(r.content as string) as { cwd: string; tmpdir: string; home: string };
    const ws = path.join(h.dir, "data", "users", "alice", "threads", "thread-a", "user-data", "workspace");
    expect(where.cwd).not.toBe(ws);
    if (bwrapUsable()) {
      expect(where).toMatchObject({ cwd: "/mnt/mcp-server", tmpdir: "/tmp", home: "/mnt/mcp-server/home" });
    } else {
      expect(fs.realpathSync(where.cwd)).toBe(fs.realpathSync(path.join(h.dir, "data", "mcp-servers", "rich")));
    }
  });

  it("maps file paths and resource links in results to /mnt/user-data/...; remote links stay", async () => {
    const r = await call(tools, "rich_write_report", { name: "q3", dir: "/mnt/user-data/workspace" }, toolRuntime("thread-b", "bob"));
    const text = r.content as string;
    expect(text).toContain("Saved the report as /mnt/user-data/workspace/q3.txt.");
    expect(text).toContain("[resource: q3.txt (text/plain)] /mnt/user-data/workspace/q3.txt");
    expect(text).toContain("https://example.com/remote.txt");
    expect(text).not.toContain(h.dir);
    expect(r.artifact?.resource_links).toEqual([
      { uri: "/mnt/user-data/workspace/q3.txt", name: "q3.txt", mime_type: "text/plain" },
      { uri: "https://example.com/remote.txt", name: "remote.txt" },
    ]);
  });

  it("runs server-filesystem rooted in the thread workspace", async () => {
    const rt = toolRuntime("thread-fs", "carol");
    const w = await call(tools, "fs_write_file", { path: "/mnt/user-data/workspace/notes.txt", content: "from mcp" }, rt);
    expect(w.status).toBe("success");
    const ws = path.join(h.dir, "data", "users", "carol", "threads", "thread-fs", "user-data", "workspace");
    expect(fs.readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("from mcp");
    const rd = await call(tools, "fs_read_text_file", { path: "/mnt/user-data/workspace/notes.txt" }, rt);
    expect(rd.content).toContain("from mcp");
    // outside the workspace root the server itself refuses
    const out = await call(tools, "fs_read_text_file", { path: "/etc/hostname" }, rt);
    expect(out.status).toBe("error");
  });

  it("passes error results through as error tool messages", async () => {
    const r = await call(tools, "rich_fail", {});
    expect(r).toMatchObject({ status: "error", content: "Error: the server refused" });
  });

  it("reuses one session per (server, user:thread) and closes a thread's sessions on closeThread", async () => {
    const pid = async (t: string, u: string) => (JSON.parse((await call(tools, "rich_where", {}, toolRuntime(t, u))).content as string) as { instance: string }).instance;
    // (t1, u1) and (thread-a, alice) already have sessions from the tests above
    const a1 = await pid("t1", "u1");
    expect(await pid("t1", "u1")).toBe(a1);
    const other = await pid("thread-a", "alice");
    expect(other).not.toBe(a1);
    expect(h.pool.status().find((s) => s.name === "rich")?.sessions).toBeGreaterThanOrEqual(2);
    await h.pool.closeThread("t1", "u1");
    expect(await pid("t1", "u1")).not.toBe(a1);
    expect(await pid("thread-a", "alice")).toBe(other);
  });
});

describe("McpPool session LRU bound", () => {
  it("evicts (and closes) the least recently used session beyond maxSessions", async () => {
    const h = makePool({ rich: nodeServer(path.join(FIXTURES, "rich-server.mjs")) }, { maxSessions: 1 });
    try {
      const tools = await h.pool.getTools();
      const pid = async (t: string) => (JSON.parse((await call(tools, "rich_where", {}, toolRuntime(t))).content as string) as { instance: string }).instance;
      const first = await pid("a");
      await pid("b");
      expect(h.pool.status()[0].sessions).toBe(1);
      expect(await pid("a")).not.toBe(first);
    } finally {
      await h.cleanup();
    }
  });
});
