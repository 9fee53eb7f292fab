import path from "node:path";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { guardApiSubmittedEntry, maskArgs, writeMcpServers, maskUrlsIn, normalizeServerEntry, restoreMaskedArgs, restoreMaskedUrl, toVirtualPath } from "../../src/mcp";
import os from "node:os";

describe("masking secrets in args and URLs", () => {
  it("masks secret flags, KEY=VALUE, header lines and URL credentials; leaves the rest byte for byte", () => {
    const args = [
      "-y",
      "@scope/server",
      "--token",
      "ghp_abc",
      "--api-key=sk-1",
      "--mode",
      "fast",
      "DB_PASSWORD=hunter2",
      "LOG_LEVEL=debug",
      "Authorization: Bearer xyz",
      "--url",
      "postgres://admin:pw@127.0.0.1:5432/db?sslmode=require&password=p2",
      "https://127.0.0.1/a#frag",
      "--secret",
      "--verbose",
    ];
    expect(maskArgs(args)).toEqual([
      "-y",
      "@scope/server",
      "--token",
      "***",
      "--api-key=***",
      "--mode",
      "fast",
      "DB_PASSWORD=***",
      "LOG_LEVEL=debug",
      "Authorization: ***",
      "--url",
      "postgres://***:***@127.0.0.1:5432/db?sslmode=***&password=***",
      "https://127.0.0.1/a#frag",
      "--secret",
      "--verbose",
    ]);
    expect(maskUrlsIn("https://tok@h.example/mcp?key=1&empty=&flag")).toBe("https://***@h.example/mcp?key=***&empty=&flag");
  });

  it("masks a token in a known key format wherever it stands: positional, or after a short flag only the server understands", () => {
    const github = `ghp_${"a1".repeat(18)}`;
    const anthropic = `sk-ant-api03-${"x".repeat(24)}`;
    const stored = ["-y", "@modelcontextprotocol/server-github", github, "-t", anthropic, "--verbose", "ghp_short"];
    const masked = maskArgs(stored);
    expect(masked).toEqual(["-y", "@modelcontextprotocol/server-github", "***", "-t", "***", "--verbose", "ghp_short"]);
    expect(JSON.stringify(masked)).not.toContain(github.slice(4));
    expect(restoreMaskedArgs("s", masked, stored)).toEqual(stored);
  });

  it("restores masked args and urls to the stored values; an edited or moved masked value is refused", () => {
    const stored = ["--token", "ghp_abc", "https://u:p@127.0.0.1/x?k=v"];
    expect(restoreMaskedArgs("s", maskArgs(stored), stored)).toEqual(stored);
    expect(restoreMaskedArgs("s", ["--token", "new-token", maskArgs(stored)[2]], stored)).toEqual(["--token", "new-token", stored[2]]);
    expect(() => restoreMaskedArgs("s", ["***", "--token", "***"], stored)).toThrow(/args\[0\] contains the masked value/);
    expect(restoreMaskedUrl("s", "https://***:***@127.0.0.1/x?k=***", "https://u:p@127.0.0.1/x?k=v")).toBe("https://u:p@127.0.0.1/x?k=v");
    expect(() => restoreMaskedUrl("s", "https://***:***@127.0.0.2/x?k=***", "https://u:p@127.0.0.1/x?k=v")).toThrow(/url contains the masked value/);
  });
});

describe("guardApiSubmittedEntry", () => {
  const entry = (raw: Record<string, unknown>) => normalizeServerEntry("s", raw);

  it("refuses whole-value $VAR / ${VAR} anywhere unless allowlisted; plain text with a $ is not a reference", () => {
    const submit = (raw: Record<string, unknown>, allow: string[] = []) => guardApiSubmittedEntry("s", entry(raw), { incoming: raw, stored: undefined }, allow);
    expect(() => submit({ command: "npx", env: { K: "$SECRET" } })).toThrow(/env\.K refers to the environment variable SECRET.*mcp_api\.allowed_env_vars.*currently: none/);
    expect(() => submit({ type: "http", url: "http://127.0.0.1/", oauth: { token_url: "http://127.0.0.1/t", client_secret: "${CS}" } })).toThrow(/oauth\.client_secret refers to .* CS/);
    expect(() => submit({ command: "npx", env: { K: "$SECRET" } }, ["SECRET"])).not.toThrow();
    expect(() => submit({ command: "npx", args: ["costs $5 a month", "pre $X"] })).not.toThrow();
  });

  it("accepts values carried over from the stored entry only while its destination is unchanged", () => {
    const stored = { type: "http", url: "http://127.0.0.1/mcp", headers: { A: "$TOKEN" }, sandbox: false };
    const same = { ...stored, description: "x" };
    expect(() => guardApiSubmittedEntry("s", entry(same), { incoming: same, stored }, [])).not.toThrow();
    const moved = { ...stored, url: "http://127.0.0.2/collect" };
    expect(() => guardApiSubmittedEntry("s", entry(moved), { incoming: moved, stored }, [])).toThrow(/headers\.A refers to the environment variable TOKEN/);
    const optOut = { command: "npx", args: ["-y", "pkg"], sandbox: false };
    expect(() => guardApiSubmittedEntry("s", entry(optOut), { incoming: optOut, stored: undefined }, [])).toThrow(/"sandbox": false/);
    const literal = { type: "http", url: "http://127.0.0.1/mcp", headers: { A: "Bearer real" } };
    const movedMasked = { ...literal, url: "http://127.0.0.2/", headers: { A: "***" } };
    expect(() => guardApiSubmittedEntry("s", entry({ ...movedMasked, headers: literal.headers }), { incoming: movedMasked, stored: literal }, [])).toThrow(/headers\.A keeps a stored secret/);
  });

  it("counts the OAuth token endpoint and a stdio server's environment as the destination of its stored secrets", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-guard-"));
    const file = path.join(dir, "extensions_config.json");
    const stored = {
      api: { type: "http", url: "http://127.0.0.1/mcp", oauth: { token_url: "http://127.0.0.1/token", client_id: "id", client_secret: "cs-real" } },
      gh: { command: "npx", args: ["-y", "pkg", "--token", "ghp_real"], env: { LOG: "1" } },
    };
    fs.writeFileSync(file, JSON.stringify({ mcpServers: stored }));
    const validate = (name: string, e: Record<string, unknown>, ctx: { incoming: Record<string, unknown>; stored: Record<string, unknown> | undefined }) =>
      guardApiSubmittedEntry(name, e, ctx, []);
    try {
      // The masked GET view sent back with only the token endpoint changed: the stored client_secret would be posted there.
      const tokenMoved = { api: { type: "http", url: "http://127.0.0.1/mcp", oauth: { token_url: "http://127.0.0.2/collect", client_id: "id", client_secret: null } } };
      expect(() => writeMcpServers(file, tokenMoved, validate)).toThrow(/oauth\.client_secret keeps the stored secret/);
      // Same command and (masked) args, but an environment that makes npx fetch other code: it would get the stored token.
      const envChanged = { gh: { command: "npx", args: ["-y", "pkg", "--token", "***"], env: { LOG: "***", npm_config_registry: "http://127.0.0.2:4873/" } } };
      expect(() => writeMcpServers(file, envChanged, validate)).toThrow(/args\[3\] keeps a stored secret/);
      // Unchanged round trips still work.
      const same = { api: { ...stored.api, oauth: { ...stored.api.oauth, client_secret: null } }, gh: { command: "npx", args: ["-y", "pkg", "--token", "***"], env: { LOG: "***" } } };
      const written = writeMcpServers(file, same, validate) as { mcpServers: Record<string, { oauth?: { client_secret: string }; args?: string[] }> };
      expect(written.mcpServers.api.oauth?.client_secret).toBe("cs-real");
      expect(written.mcpServers.gh.args?.[3]).toBe("ghp_real");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("path mapping of a sandboxed server's results", () => {
  it("maps what the server sees at /mnt/user-data to the thread's virtual path after checking the host file", () => {
    const userData = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-map-"));
    try {
      fs.mkdirSync(path.join(userData, "outputs"));
      fs.writeFileSync(path.join(userData, "outputs", "r.txt"), "x");
      const scope = { userDataDir: userData, cwd: "/mnt/mcp-server", serverUserData: "/mnt/user-data" };
      expect(toVirtualPath("file:///mnt/user-data/outputs/r.txt", scope)).toBe("/mnt/user-data/outputs/r.txt");
      expect(toVirtualPath("/mnt/user-data/outputs/missing.txt", scope)).toBeUndefined();
      // the server's own files are not the thread's, even when a same-named file exists in the thread
      expect(toVirtualPath("outputs/r.txt", scope)).toBeUndefined();
      expect(toVirtualPath(path.join(userData, "outputs", "r.txt"), scope)).toBeUndefined();
    } finally {
      fs.rmSync(userData, { recursive: true, force: true });
    }
  });
});
