import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mcpConfigResponse, readRawExtensionsConfig, setMcpServerEnabled, writeMcpServers } from "../../src/mcp";

let dir = "";
afterEach(() => dir && fs.rmSync(dir, { recursive: true, force: true }));
const setup = (doc: unknown) => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-cfg-"));
  const file = path.join(dir, "extensions_config.json");
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
};
const noCheck = () => undefined;

describe("extensions_config.json for the MCP config API", () => {
  it("masks env, headers, OAuth secrets and sensitive extras; fills DeerFlow's defaults", () => {
    const view = mcpConfigResponse({
      mcpServers: {
        gh: { command: "npx", args: ["-y", "gh"], env: { GITHUB_TOKEN: "$GITHUB_TOKEN" }, apiKey: "k", extra: { nested_token: "t", plain: 1 } },
        api: { type: "http", url: "http://x/mcp", headers: { Authorization: "Bearer t" }, oauth: { token_url: "http://t", client_id: "c", client_secret: "s" } },
      },
    });
    expect(view.mcp_servers.gh).toMatchObject({ enabled: true, type: "stdio", env: { GITHUB_TOKEN: "***" }, apiKey: "***", extra: { nested_token: "***", plain: 1 }, tool_name_prefix: true, session_init_timeout: 60 });
    expect(view.mcp_servers.api).toMatchObject({ headers: { Authorization: "***" }, oauth: { client_id: "c", client_secret: null, refresh_token: null } });
  });

  it("round-trips a masked GET through PUT without losing secrets or $VAR placeholders, keeping other top-level keys", () => {
    const file = setup({ mcpInterceptors: ["a:b"], skills: { s: { enabled: false } }, mcpServers: { gh: { command: "npx", args: ["-y", "gh"], env: { GITHUB_TOKEN: "$GITHUB_TOKEN" }, oauth: { token_url: "http://t", client_id: "c", client_secret: "s" } } } });
    const view = mcpConfigResponse(readRawExtensionsConfig(file));
    const edited: Record<string, unknown> = { ...view.mcp_servers.gh, enabled: false };
    writeMcpServers(file, { gh: edited }, noCheck);
    const raw = readRawExtensionsConfig(file) as { mcpServers: { gh: Record<string, unknown> }; mcpInterceptors: unknown; skills: unknown };
    expect(raw.mcpServers.gh).toMatchObject({ enabled: false, env: { GITHUB_TOKEN: "$GITHUB_TOKEN" }, oauth: { client_secret: "s" } });
    expect(raw.mcpInterceptors).toEqual(["a:b"]);
    expect(raw.skills).toEqual({ s: { enabled: false } });
    // an empty string clears a stored OAuth secret
    writeMcpServers(file, { gh: { ...edited, oauth: { ...(edited.oauth as object), client_secret: "" } } }, noCheck);
    expect((readRawExtensionsConfig(file) as { mcpServers: { gh: { oauth: { client_secret: unknown } } } }).mcpServers.gh.oauth.client_secret).toBeNull();
  });

  it("refuses a masked value for a new key, and invalid entries, before writing anything", () => {
    const file = setup({ mcpServers: {} });
    const before = fs.readFileSync(file, "utf8");
    expect(() => writeMcpServers(file, { n: { command: "npx", env: { K: "***" } } }, noCheck)).toThrow(/masked value/);
    expect(() => writeMcpServers(file, { n: { command: "npx", args: "not-a-list" } as never }, noCheck)).toThrow(/Invalid MCP server 'n'/);
    expect(() => writeMcpServers(file, { n: { command: "node" } }, () => {
      throw new Error("rejected by validation");
    })).toThrow(/rejected by validation/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
    expect(fs.readdirSync(dir)).toEqual(["extensions_config.json"]); // no temp file left behind
  });

  it("enables/disables one server (PATCH), validating before enabling", () => {
    const file = setup({ mcpServers: { a: { command: "npx", args: ["-y", "a"], enabled: false } } });
    setMcpServerEnabled(file, "a", true, noCheck);
    expect((readRawExtensionsConfig(file) as { mcpServers: { a: { enabled: boolean } } }).mcpServers.a.enabled).toBe(true);
    expect(() => setMcpServerEnabled(file, "zzz", true, noCheck)).toThrow(/not found/);
  });
});
