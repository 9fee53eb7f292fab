import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DeerFlowRuntime } from "@deerflow-ts/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";

const FIXTURE = path.resolve(__dirname, "../../../harness/test/fixtures/mcp/crashing-server.mjs");

describe("MCP routes of the gateway over real HTTP", () => {
  let dir: string;
  let file: string;
  let base: string;
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-routes-"));
    file = path.join(dir, "extensions_config.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpInterceptors: ["pkg.mod:build"],
        mcpServers: {
          local: { type: "stdio", command: process.execPath, args: [FIXTURE], env: { TOKEN: "$SECRET_TOKEN" }, description: "operator-configured" },
          broken: { type: "stdio", command: process.execPath, args: [FIXTURE, "--exit-at-start"] },
          // Operator-written: a `$VAR` header, credentials in the url and in args (never started: disabled).
          remote: {
            type: "http",
            enabled: false,
            url: "http://user:pw@127.0.0.1:9/mcp?key=abc123&region=eu",
            headers: { Authorization: "$REMOTE_TOKEN" },
            args: ["--api-key", "k-123", "--mode", "fast", "DB_PASSWORD=hunter2", "--endpoint=https://tok@127.0.0.1:9/x?sig=zz"],
          },
        },
      }),
    );
    fs.writeFileSync(path.join(dir, "config.yaml"), "models:\n  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }\nsandbox:\n  use: local\nmcp_api:\n  allowed_env_vars: [GITHUB_TOKEN]\n");
    runtime = await DeerFlowRuntime.open({ configPath: path.join(dir, "config.yaml"), cwd: dir, dataDir: path.join(dir, "data"), log: () => undefined });
    gateway = await createGateway({ runtime, webDistDir: null, log: () => undefined });
    base = await gateway.start({ port: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await runtime.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const send = (method: string, route: string, body?: unknown) =>
    fetch(`${base}/api${route}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

  it("GET /api/mcp/config returns DeerFlow's shape with secrets masked", async () => {
    const res = await send("GET", "/mcp/config");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { mcp_servers: Record<string, Record<string, unknown>> };
    expect(body.mcp_servers.local).toMatchObject({ enabled: true, type: "stdio", env: { TOKEN: "***" }, description: "operator-configured", tool_name_prefix: true });
  });

  it("GET /api/mcp/status reports each server: connected with tools, or failed with its error", async () => {
    const res = await send("GET", "/mcp/status?wait=true");
    const { servers } = (await res.json()) as { servers: Array<Record<string, unknown>> };
    const by = Object.fromEntries(servers.map((s) => [s.name, s]));
    expect(by.local).toMatchObject({ connected: true, state: "connected", tools: ["local_echo", "local_crash"], last_error: null });
    expect(by.broken).toMatchObject({ connected: false, state: "failed", tools: [] });
    expect(String(by.broken.last_error)).toMatch(/failed to start/);
  });

  it("PUT validates stdio launches: disallowed command, exec flags and code-injecting env are 400s; nothing is written", async () => {
    const before = fs.readFileSync(file, "utf8");
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ command: "bash", args: ["-c", "id"] }, /disallowed stdio command 'bash'/],
      [{ command: "npx", args: ["-c", "id"] }, /passes '-c' to 'npx'/],
      [{ command: "npx", args: ["-y", "pkg"], env: { LD_PRELOAD: "/x.so" } }, /LD_PRELOAD/],
      [{ command: "/usr/bin/npx", args: [] }, /single executable name/],
    ];
    for (const [server, detail] of cases) {
      const res = await send("PUT", "/mcp/config", { mcp_servers: { evil: server } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    }
    expect((await send("PUT", "/mcp/config", { mcp_servers: "nope" })).status).toBe(422);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });

  type Servers = { mcp_servers: Record<string, Record<string, unknown>> };
  const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;

  it("GET masks secrets in args (secret flags, KEY=VALUE, URLs) and the url's userinfo and query values", async () => {
    const { mcp_servers } = (await (await send("GET", "/mcp/config")).json()) as Servers;
    expect(mcp_servers.remote.url).toBe("http://***:***@127.0.0.1:9/mcp?key=***&region=***");
    expect(mcp_servers.remote.headers).toEqual({ Authorization: "***" });
    expect(mcp_servers.remote.args).toEqual(["--api-key", "***", "--mode", "fast", "DB_PASSWORD=***", "--endpoint=https://***@127.0.0.1:9/x?sig=***"]);
    const text = JSON.stringify(mcp_servers);
    for (const secret of ["pw@", "abc123", "k-123", "hunter2", "tok@", "zz", "$REMOTE_TOKEN"]) expect(text).not.toContain(secret);
  });

  it("PUT refuses $VAR references not in mcp_api.allowed_env_vars (env, headers, url, args), naming server, key and variable; nothing is written", async () => {
    const before = fs.readFileSync(file, "utf8");
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ type: "http", url: "http://127.0.0.1:9/mcp", headers: { "X-Key": "$OPENAI_API_KEY" } }, "headers.X-Key", "OPENAI_API_KEY"],
      [{ type: "http", url: "${AWS_URL}" }, "url", "AWS_URL"],
      [{ command: "npx", args: ["-y", "pkg", "${HOME_SECRET}"] }, "args[2]", "HOME_SECRET"],
      [{ command: "npx", args: ["-y", "pkg"], env: { TOKEN: "$SECRET_TOKEN" } }, "env.TOKEN", "SECRET_TOKEN"],
    ];
    for (const [server, key, variable] of cases) {
      const res = await send("PUT", "/mcp/config", { mcp_servers: { exfil: server } });
      expect(res.status).toBe(400);
      const msg = await detail(res);
      expect(msg).toContain("MCP server 'exfil'");
      expect(msg).toContain(`${key} refers to the environment variable ${variable}`);
      expect(msg).toContain("mcp_api.allowed_env_vars");
    }
    // "sandbox": false is the operator's alone
    const optOut = await send("PUT", "/mcp/config", { mcp_servers: { host: { command: "npx", args: ["-y", "pkg"], sandbox: false } } });
    expect(optOut.status).toBe(400);
    expect(await detail(optOut)).toMatch(/"sandbox": false .* cannot be set through the API/);
    // a package uploaded into a thread (its host path learned from somewhere) cannot become a server
    const uploaded = path.join(dir, "data", "users", "default", "threads", "t1", "user-data", "uploads", "pkg");
    const fromUpload = await send("PUT", "/mcp/config", { mcp_servers: { up: { command: "npx", args: ["-y", uploaded] } } });
    expect(fromUpload.status).toBe(400);
    expect(await detail(fromUpload)).toMatch(/MCP server 'up': args\[1\] names a path inside the data dir/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });

  it("a masked round trip keeps the operator's $VAR and secrets; moving them to a new url or command is refused", async () => {
    const view = (await (await send("GET", "/mcp/config")).json()) as Servers;
    const keep = { github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: "$GITHUB_TOKEN" }, enabled: false } };
    const ok = await send("PUT", "/mcp/config", { mcp_servers: { ...keep, remote: { ...view.mcp_servers.remote, description: "edited" } } });
    expect(ok.status).toBe(200);
    const stored = JSON.parse(fs.readFileSync(file, "utf8")).mcpServers.remote as Record<string, unknown>;
    expect(stored).toMatchObject({
      description: "edited",
      url: "http://user:pw@127.0.0.1:9/mcp?key=abc123&region=eu",
      headers: { Authorization: "$REMOTE_TOKEN" },
      args: ["--api-key", "k-123", "--mode", "fast", "DB_PASSWORD=hunter2", "--endpoint=https://tok@127.0.0.1:9/x?sig=zz"],
    });
    const before = fs.readFileSync(file, "utf8");
    const moved = await send("PUT", "/mcp/config", { mcp_servers: { remote: { ...view.mcp_servers.remote, url: "http://127.0.0.2:9/collect" } } });
    expect(moved.status).toBe(400);
    expect(await detail(moved)).toMatch(/MCP server 'remote': .*(refers to the environment variable REMOTE_TOKEN|keeps a stored secret)/);
    const movedSecret = await send("PUT", "/mcp/config", {
      mcp_servers: { remote: { ...view.mcp_servers.remote, headers: { Authorization: "***" }, args: ["--api-key", "***"], url: "http://127.0.0.2:9/collect" } },
    });
    expect(movedSecret.status).toBe(400);
    const editedMask = await send("PUT", "/mcp/config", { mcp_servers: { remote: { ...view.mcp_servers.remote, url: "http://***:***@127.0.0.2:9/mcp?key=***" } } });
    expect(editedMask.status).toBe(400);
    expect(await detail(editedMask)).toMatch(/url contains the masked value/);
    expect(fs.readFileSync(file, "utf8")).toBe(before);
  });

  it("PUT saves atomically, keeps masked secrets, $VARs and other top-level keys, and the pool reloads", async () => {
    const current = (await (await send("GET", "/mcp/config")).json()) as { mcp_servers: Record<string, Record<string, unknown>> };
    // the operator's node entry cannot be re-submitted through the API (not allowlisted), so the UI sends the launcher entries
    const res = await send("PUT", "/mcp/config", {
      mcp_servers: { github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: "$GITHUB_TOKEN" }, enabled: false } },
    });
    expect(res.status).toBe(200);
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(saved.mcpInterceptors).toEqual(["pkg.mod:build"]);
    expect(Object.keys(saved.mcpServers as object)).toEqual(["github"]);
    expect((saved.mcpServers as Record<string, { env: unknown }>).github.env).toEqual({ GITHUB_TOKEN: "$GITHUB_TOKEN" });
    expect(current.mcp_servers.remote).toBeDefined();
    const { servers } = (await (await send("GET", "/mcp/status?wait=true")).json()) as { servers: Array<Record<string, unknown>> };
    expect(servers).toEqual([expect.objectContaining({ name: "github", state: "disabled", connected: false })]);
    // a masked round trip keeps the stored value
    const view = (await (await send("GET", "/mcp/config")).json()) as { mcp_servers: Record<string, Record<string, unknown>> };
    expect((await send("PUT", "/mcp/config", { mcp_servers: { github: { ...view.mcp_servers.github, description: "gh" } } })).status).toBe(200);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).mcpServers.github).toMatchObject({ description: "gh", env: { GITHUB_TOKEN: "$GITHUB_TOKEN" } });
  });

  it("PATCH enables/disables one server; unknown servers are 404; cache reset answers DeerFlow's shape", async () => {
    const on = await send("PATCH", "/mcp/config", { server_name: "github", enabled: true });
    expect(on.status).toBe(200);
    expect(((await on.json()) as { mcp_servers: { github: { enabled: boolean } } }).mcp_servers.github.enabled).toBe(true);
    expect((await send("PATCH", "/mcp/config", { server_name: "nope", enabled: true })).status).toBe(404);
    const reset = await send("POST", "/mcp/cache/reset");
    expect(await reset.json()).toEqual({ success: true, message: "MCP tools cache reset. Tools will reload on next use." });
  });
});
