/**
 * MCP wired into the runtime: DeerFlowRuntime attaches the pool, the async
 * lead-agent factory awaits MCP tools, `tool_search.enabled` defers them
 * behind tool_search with the prompt listing their names, thread deletion
 * closes the thread's sessions and closing the runtime closes the pool.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { ScriptedModel } from "../../src/testing";
import { tempBase } from "../sandbox/helpers";
import { bwrapUsable, FIXTURES } from "./_helpers";

const base = tempBase("dfmcplead-");
afterAll(() => base.cleanup());

function writeConfig(dir: string, toolSearch: boolean): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "extensions_config.json"),
    JSON.stringify({
      mcpServers: {
        rich: {
          type: "stdio",
          command: process.execPath,
          args: [path.join(FIXTURES, "rich-server.mjs")],
          tools: { structured: { routing: { mode: "prefer", priority: 50, keywords: ["sum"] } } },
        },
        broken: { type: "stdio", command: process.execPath, args: [path.join(FIXTURES, "crashing-server.mjs"), "--exit-at-start"] },
      },
    }),
  );
  fs.writeFileSync(
    path.join(dir, "config.yaml"),
    ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", "  use: local", "title:", "  enabled: false", "tool_search:", `  enabled: ${toolSearch}`, ""].join("\n"),
  );
}

async function open(dir: string, model: ScriptedModel, logs: string[]) {
  return DeerFlowRuntime.open({
    configPath: path.join(dir, "config.yaml"),
    cwd: dir,
    dataDir: path.join(dir, "data"),
    log: (m) => logs.push(m),
    modelFactory: () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
  });
}

describe("MCP in the lead agent (DeerFlowRuntime)", () => {
  it("defers MCP tools behind tool_search, lists them in the prompt, and runs a promoted tool in its own launch directory", async () => {
    const dir = path.join(base.dir, "deferred");
    writeConfig(dir, true);
    const model = new ScriptedModel([
      { toolCalls: [{ name: "tool_search", args: { query: "select:rich_where" } }] },
      { toolCalls: [{ name: "rich_where", args: {} }] },
      "done",
      "auto-promoted",
    ]);
    const logs: string[] = [];
    const rt = await open(dir, model, logs);
    try {
      expect(await new DeerFlowClient(rt).chat("where are you?", { threadId: "th1" })).toBe("done");
      const names0 = model.requests[0].tools.map((t) => t.name);
      expect(names0).toContain("tool_search");
      expect(names0.some((n) => n.startsWith("rich_"))).toBe(false);
      const prompt = String(model.requests[0].messages[0].content);
      expect(prompt).toContain("<available-deferred-tools>");
      expect(prompt).toContain("- rich_where");
      expect(prompt).not.toContain("broken_");
      expect(prompt).toContain("<mcp_routing_hints>\nWhen the user's request involves sum:\n  use `tool_search` to fetch `rich_structured`, then prefer that MCP tool.");
      expect(model.requests[1].tools.map((t) => t.name)).toContain("rich_where");
      const result = model.requests[2].messages.filter((m) => m.type === "tool").at(-1)!;
      const where = JSON.parse(String(result.content)) as { cwd: string };
      // Started in the server's own launch directory (inside its sandbox: /mnt/mcp-server), never in the thread workspace.
      expect(where.cwd).toBe(bwrapUsable() ? "/mnt/mcp-server" : fs.realpathSync(path.join(dir, "data/mcp-servers/rich")));
      // McpRouting: a message matching the routing keywords promotes the tool before the first model call
      expect(await new DeerFlowClient(rt).chat("what is the sum of 2 and 3?", { threadId: "th3" })).toBe("auto-promoted");
      expect(model.requests[3].tools.map((t) => t.name)).toContain("rich_structured");
      expect(model.requests[3].tools.map((t) => t.name)).not.toContain("rich_where");
      // the failing server is reported once and did not block the run
      expect(logs.filter((l) => l.includes("'broken' is unavailable")).length).toBe(1);
      const pool = rt.extensions.mcp!;
      expect(pool.status().find((s) => s.name === "rich")?.sessions).toBe(1);
      await rt.deleteThread("th1", "default");
      expect(pool.status().find((s) => s.name === "rich")?.sessions).toBe(0);
    } finally {
      await rt.close();
    }
    expect(await rt.extensions.mcp!.getTools()).toEqual([]);
  });

  it("binds MCP tools directly when tool_search is off (the default)", async () => {
    const dir = path.join(base.dir, "direct");
    writeConfig(dir, false);
    const model = new ScriptedModel([{ toolCalls: [{ name: "rich_structured", args: { a: 20, b: 22 } }] }, "42"]);
    const rt = await open(dir, model, []);
    try {
      const client = new DeerFlowClient(rt);
      expect(await client.chat("add", { threadId: "th2" })).toBe("42");
      const names = model.requests[0].tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["rich_structured", "rich_big"]));
      expect(names).not.toContain("tool_search");
      expect(String(model.requests[0].messages[0].content)).not.toContain("<available-deferred-tools>");
      expect(String(model.requests[1].messages.at(-1)?.content)).toBe('{"sum":42}');

      // the embedded client's MCP config and status (DeerFlow's get_mcp_config / update_mcp_config)
      const cfg = await client.getMcpConfig();
      expect(Object.keys(cfg.mcp_servers)).toEqual(["rich", "broken"]);
      await client.updateMcpConfig({ rich: cfg.mcp_servers.rich });
      expect(Object.keys(JSON.parse(fs.readFileSync(path.join(dir, "extensions_config.json"), "utf8")).mcpServers)).toEqual(["rich"]);
      expect((await client.getMcpStatus()).servers.map((s) => [s.name, s.state])).toEqual([["rich", "connected"]]);
    } finally {
      await rt.close();
    }
  });
});
