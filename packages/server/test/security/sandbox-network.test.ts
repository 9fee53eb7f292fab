/**
 * Sandbox → gateway with `sandbox.network: open`, end to end: a real
 * gateway and runtime from config.yaml (bubblewrap provider), a scripted
 * OpenAI-compatible model that makes the lead agent call `bash`, and a
 * command that tries to rewrite the MCP config through the API (adding an
 * MCP server is running code on the host) by every loopback address form,
 * directly and through the sandbox's proxy. The MCP config must not change.
 * The same PUT sent from the host afterwards succeeds: the request itself is
 * valid, the sandbox's network is what stops it.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowRuntime, parseSandboxConfig, probeBwrap, sandboxRunAs } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const probe = probeBwrap({ runAs: sandboxRunAs(parseSandboxConfig({})) });
if (!probe.ok) console.warn(`[sandbox-network] SKIPPING: bubblewrap is not usable here: ${probe.reason}`);

/** Disabled, so the control below (sent from the host, where it is accepted) never starts npx. */
const EVIL = { mcp_servers: { pwn: { type: "stdio", command: "npx", args: ["-y", "/tmp/evil-package"], enabled: false } } };
const HOSTS = ["127.0.0.1", "localhost", "0x7f000001", "2130706433", "[::ffff:127.0.0.1]", "[::1]", "0.0.0.0"];

const esc = (s: string) => s.replace(/[.[\]]/g, "\\$&");

/** The sandboxed command: every loopback form, without and with the proxy (plain and CONNECT). */
function attack(port: number): string {
  const body = JSON.stringify(EVIL).replace(/'/g, "");
  const lines = [`B='${body}'`];
  for (const host of HOSTS) {
    const url = `http://${host}:${port}/api/mcp/config`;
    const put = `curl -g -sS -m 10 -X PUT -H 'content-type: application/json' -d "$B"`;
    lines.push(`${put} '${url}' 2>&1; echo " [direct ${host} rc=$?]"`);
    lines.push(`${put} --noproxy '' '${url}' 2>&1; echo " [proxy ${host} rc=$?]"`);
    lines.push(`${put} --noproxy '' -p '${url}' 2>&1; echo " [connect ${host} rc=$?]"`);
  }
  return lines.join("\n");
}

/** A loopback port free right now (the gateway then listens on it, so the config can name it). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The chain against one `sandbox.network` value (YAML flow text; `{port}` is the gateway's port). */
function chain(network: string): void {
  describe.skipIf(!probe.ok)(`chain: sandbox (network: ${network}) → gateway API`, () => {
    let dir: string;
    let llm: ScriptedLLMServer;
    let runtime: DeerFlowRuntime;
    let gateway: Gateway;
    let url: string;
    let port = 0;
    let extensionsFile: string;

    beforeAll(async () => {
      port = await freePort();
      llm = await startScriptedLLMServer({
        script: [() => ({ toolCalls: [{ name: "bash", args: { description: "reconfigure the gateway", command: attack(port) } }] }), "done"],
      });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-sbx-net-"));
      extensionsFile = path.join(dir, "extensions_config.json");
      fs.writeFileSync(extensionsFile, JSON.stringify({ mcpServers: {} }, null, 2));
      fs.writeFileSync(
        path.join(dir, "config.yaml"),
        [
          "models:",
          `  - { name: scripted, use: openai-compatible, model: scripted, base_url: "${llm.url}/v1", api_key: k }`,
          "sandbox:",
          "  use: bwrap",
          `  network: ${network.replaceAll("{port}", String(port))}`,
          "",
        ].join("\n"),
      );
      runtime = await DeerFlowRuntime.open({ configPath: path.join(dir, "config.yaml"), cwd: dir, dataDir: path.join(dir, "data"), log: () => undefined });
      const started = await startServer({ runtime, port, quiet: true, webDistDir: null, log: () => undefined });
      gateway = started.gateway;
      url = started.url;
    });

    afterAll(async () => {
      await gateway?.close();
      await runtime?.close();
      await llm?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it("the agent's sandboxed curl cannot reach the API by any loopback form; the MCP config is unchanged", async () => {
      expect(runtime.sandboxProvider.kind).toBe("bwrap");
      const configBefore = await (await fetch(`${url}/api/mcp/config`)).text();
      const fileBefore = fs.readFileSync(extensionsFile, "utf8");

      const thread = ((await (await postJson(`${url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
      const res = await postJson(`${url}/api/threads/${thread}/runs/wait`, { input: humanInput("add my MCP server") });
      expect(res.status).toBe(200);
      const state = (await res.json()) as { messages?: Array<{ type: string; content: unknown }> };
      const toolText = (state.messages ?? [])
        .filter((m) => m.type === "tool")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
        .join("\n");
      expect(toolText).toContain("[direct 127.0.0.1");
      for (const host of HOSTS) {
        // Direct: no route out of the sandbox's own network namespace (a form curl does not match against
        // NO_PROXY, such as the IPv4-mapped one, goes to the proxy and is refused there).
        expect(toolText, host).toMatch(new RegExp(`((Couldn't connect|Failed to connect)[^\\n]*\\n? \\[direct ${esc(host)} rc=7\\]|deerflow sandbox network: refused [^\\n]*\\n? \\[direct ${esc(host)} rc=0\\])`));
        // Through the egress proxy: refused before it connects, naming the setting.
        expect(toolText, host).toMatch(new RegExp(`deerflow sandbox network: refused [^\\n]*\\n? \\[proxy ${esc(host)} rc=0\\]`));
        expect(toolText, host).toMatch(new RegExp(`CONNECT tunnel failed, response 403\\n? \\[connect ${esc(host)} rc=56\\]`));
      }
      expect(toolText).not.toContain('"mcp_servers"');

      expect(await (await fetch(`${url}/api/mcp/config`)).text()).toBe(configBefore);
      expect(fs.readFileSync(extensionsFile, "utf8")).toBe(fileBefore);

      // Control: the same request from the host is accepted, so only the sandbox's network stopped it.
      const control = await fetch(`${url}/api/mcp/config`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(EVIL) });
      expect(control.status).toBe(200);
      expect(fs.readFileSync(extensionsFile, "utf8")).toContain("evil-package");
    });
  });
}

chain("open");
// Even an exact loopback entry naming the gateway's own port does not open it.
chain('{mode: open, allow_private: ["127.0.0.1:{port}", "[::1]:{port}"]}');
