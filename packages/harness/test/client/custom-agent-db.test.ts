/**
 * The embedded client builds a custom agent from the configured agent store:
 * with `agent_storage.backend: db` the agent is a row in the data dir's
 * gateway.db (written here by another store on the same file, as another
 * process would), and an edit shows on the next turn.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAgentStore } from "../../src/agents";
import type { AgentStore } from "../../src/agents";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { startScriptedLLMServer } from "../../src/testing";
import type { ScriptedLLMServer } from "../../src/testing";

let server: ScriptedLLMServer;
let dir: string;
beforeAll(async () => {
  server = await startScriptedLLMServer({ script: [], onExhausted: "repeat-last" });
  dir = mkdtempSync(path.join(tmpdir(), "df-client-agent-db-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const systemText = (i: number): string =>
  ((server.requests[i]!.body as { messages: Array<{ role: string; content: unknown }> }).messages ?? [])
    .filter((m) => m.role === "system")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

describe("DeerFlowClient with agent_storage.backend: db", () => {
  it("runs a custom agent read from the database store, and sees an edit on the next turn", async () => {
    const { config } = appConfigFromText(
      [
        "models:",
        "  - name: basic",
        "    use: openai-compatible",
        "    model: scripted",
        `    base_url: ${server.url}/v1`,
        "    api_key: k",
        "sandbox:",
        "  use: local",
        "title:",
        "  enabled: false",
        "agent_storage:",
        "  backend: db",
      ].join("\n"),
    );
    const dataDir = path.join(dir, "data");
    const other: AgentStore = await openAgentStore(config, { dataDir });
    await other.create("default", { name: "pirate", description: "Talks like a pirate" }, "You are a pirate. Say arr.");
    const client = new DeerFlowClient({ appConfig: config, dataDir, agentName: "pirate" });
    try {
      server.push("Arr.");
      const first = server.requests.length;
      expect(await client.chat("hello")).toContain("Arr.");
      expect(systemText(first)).toContain("You are a pirate. Say arr.");
      await other.update("default", "pirate", null, "You are a parrot. Repeat everything.");
      server.push("Repeat everything.");
      const second = server.requests.length;
      await client.chat("hello again");
      expect(systemText(second)).toContain("You are a parrot.");
      expect(existsSync(path.join(dataDir, "users", "default", "agents", "pirate", "SOUL.md"))).toBe(false);
    } finally {
      await client.close();
      await other.close();
    }
  });
});
