import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { McpPool } from "../../src/mcp";
import type { McpLaunchSettings, McpPoolOptions } from "../../src/mcp";
import { probeBwrap, threadDirs } from "../../src/sandbox";
import { createRunContext } from "../../src/runtime/run-context";
import type { ToolDefinition, ToolRuntime } from "../../src/tools";

const ROOT = path.resolve(__dirname, "../../../..");
/** Fixture MCP servers written with the official SDK. */
export const FIXTURES = path.resolve(__dirname, "../fixtures/mcp");
export const EVERYTHING = path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = path.join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

/** The uid sandboxed servers drop to when the tests run as root (the bash sandbox's default). */
export const SANDBOX_RUN_AS = typeof process.getuid === "function" && process.getuid() === 0 ? { uid: 65534, gid: 65534 } : undefined;

/** Whether stdio servers run in their own bubblewrap sandbox on this machine (else: unsandboxed, clean env). */
export function bwrapUsable(): boolean {
  return probeBwrap({ runAs: SANDBOX_RUN_AS }).ok;
}

/** A stdio server entry running a script with this Node. */
export function nodeServer(script: string, args: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "stdio", command: process.execPath, args: [script, ...args], ...extra };
}

export interface PoolHarness {
  pool: McpPool;
  dir: string;
  configPath: string;
  warnings: string[];
  infos: string[];
  writeConfig(servers: Record<string, unknown>): void;
  cleanup(): Promise<void>;
}

/** A pool over an extensions_config.json in a fresh temp dir; thread dirs under it. */
export function makePool(servers: Record<string, unknown>, options: Partial<Omit<McpPoolOptions, "launch">> & { launch?: Partial<McpLaunchSettings> } = {}): PoolHarness {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-pool-"));
  const configPath = path.join(dir, "extensions_config.json");
  const writeConfig = (s: Record<string, unknown>) => {
    const tmp = `${configPath}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ mcpServers: s }));
    fs.renameSync(tmp, configPath);
  };
  writeConfig(servers);
  const warnings: string[] = [];
  const infos: string[] = [];
  const pool = new McpPool({
    extensionsConfig: () => ({ path: configPath }),
    threadDirs: (u, t) => threadDirs(path.join(dir, "data"), t, u),
    logger: { warn: (m) => warnings.push(m), info: (m) => infos.push(m) },
    ...options,
    // Launch settings given by a test add to the defaults (the data dir lives in this temp dir).
    launch: { dataDir: path.join(dir, "data"), runAs: SANDBOX_RUN_AS, warn: (m) => warnings.push(m), ...options.launch },
  });
  return {
    pool,
    dir,
    configPath,
    warnings,
    infos,
    writeConfig,
    cleanup: async () => {
      await pool.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A minimal tool runtime for calling a tool directly. */
export function toolRuntime(threadId = "t1", userId = "u1", signal: AbortSignal = new AbortController().signal): ToolRuntime {
  const rt = {
    state: { messages: [] } as never,
    context: createRunContext({ threadId, runId: "r1", context: { user_id: userId } }),
    toolCallId: "call-1",
    signal,
    writer: () => {},
    emit: () => {},
    namespace: [],
    interrupt: () => {
      throw new Error("no interrupts here");
    },
  };
  // MCP tools read only identity and signal; the rest of the run plumbing is not needed here.
  return rt as unknown as ToolRuntime;
}

/** Find a tool by name or fail the test with the names there are. */
export function byName(tools: ToolDefinition[], name: string): ToolDefinition {
  const t = tools.find((x) => x.name === name);
  if (!t) throw new Error(`tool ${name} not found among ${tools.map((x) => x.name).join(", ")}`);
  return t;
}

/** Call a tool and return its result object. */
export async function call(tools: ToolDefinition[], name: string, args: Record<string, unknown>, rt = toolRuntime()) {
  return (await byName(tools, name).execute(args, rt)) as { content: unknown; status: string; artifact?: Record<string, unknown> };
}
