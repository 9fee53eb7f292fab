import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, SandboxError } from "../../../src/errors";
import { createSandboxProvider } from "../../../src/sandbox";
import { createSandboxTools } from "../../../src/builtins/sandbox-tools";
import { createRemoteSandboxProvider, provisionerSandboxId, RemoteSandboxProvider } from "../../../src/sandbox/remote";
import { fakeToolRuntime } from "../helpers";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server on 127.0.0.1 answering with `handler`, recording what it was sent. */
async function serveOn(handler: (req: Seen, res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const s = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("remote sandbox client", () => {
  let baseDir = "";
  beforeAll(() => {
    baseDir = mkdtempSync(path.join(os.tmpdir(), "dfremote-"));
  });
  afterAll(() => rmSync(baseDir, { recursive: true, force: true }));

  it("sandbox.provisioner_url selects the remote provider (also under DeerFlow's AioSandboxProvider class path)", () => {
    for (const use of [undefined, "deerflow.community.aio_sandbox:AioSandboxProvider", "docker"]) {
      const p = createSandboxProvider({ use, provisioner_url: "http://127.0.0.1:1" }, { baseDir });
      expect(p).toBeInstanceOf(RemoteSandboxProvider);
      expect(p.kind).toBe("remote");
    }
    expect(createSandboxProvider({ use: "local", provisioner_url: "http://127.0.0.1:1" }, { baseDir, warn: () => {} }).kind).toBe("local");
  });

  it("resolves a $VAR API key, and names the key when the variable is unset or the URL is malformed", () => {
    const p = createRemoteSandboxProvider({ provisioner_url: "http://127.0.0.1:1/", provisioner_api_key: "$MY_PROV_KEY" }, { baseDir, env: { MY_PROV_KEY: "k".repeat(20) } });
    expect(p.settings).toMatchObject({ provisionerUrl: "http://127.0.0.1:1", apiKey: "k".repeat(20), threadDataMounts: false, idleTimeoutMs: 600_000 });
    expect(p.usesThreadDataMounts).toBe(false);
    const unset = (() => createRemoteSandboxProvider({ provisioner_url: "http://127.0.0.1:1", provisioner_api_key: "$NOT_SET_ANYWHERE" }, { baseDir, env: {} }))
    expect(unset).toThrow(ConfigError);
    expect(unset).toThrow(/sandbox\.provisioner_api_key refers to \$NOT_SET_ANYWHERE/);
    expect(() => createRemoteSandboxProvider({ provisioner_url: "ftp://x" }, { baseDir })).toThrow(/sandbox\.provisioner_url/);
  });

  it("a provisioner that is down fails the acquire with a clear SandboxError, and the bash tool answers Error: instead of crashing the run", async () => {
    const port = await deadPort();
    expect(() => createRemoteSandboxProvider({ provisioner_url: `http://user:secret@127.0.0.1:${port}` }, { baseDir })).toThrow(/must not contain credentials/);
    const provider = createRemoteSandboxProvider({ provisioner_url: `http://127.0.0.1:${port}`, provisioner_api_key: "key-0123456789abcdef" }, { baseDir });
    const err = await provider.acquire("t-down").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as SandboxError).code).toBe("remote_unreachable");
    expect((err as Error).message).toBe(`Sandbox provisioner at http://127.0.0.1:${port}/api/sandboxes is unreachable (ECONNREFUSED): check that it runs and that the URL is right`);
    expect(provider.leaseCount(provider.sandboxId("t-down"))).toBe(0);

    const bash = createSandboxTools({ provider, includeBash: true }).find((t) => t.name === "bash");
    const out = (await bash?.execute({ description: "d", command: "echo hi" }, fakeToolRuntime("t-down"))) as { content: string; status: string };
    expect(out.status).toBe("error");
    expect(out.content).toMatch(/^Error: Sandbox provisioner at http:\/\/127\.0\.0\.1:\d+\/api\/sandboxes is unreachable/);
    await provider.shutdown();
  });

  it("sends DeerFlow's create payload with X-API-Key; a refused key, a malformed answer and a missing token are clear errors", async () => {
    let mode: "401" | "garbage" | "no-token" = "401";
    const srv = await serveOn((req, res) => {
      if (mode === "401") return json(res, 401, { detail: "Unauthorized" });
      if (mode === "garbage") return json(res, 200, { sandbox_id: 5 });
      json(res, 200, { sandbox_id: "x", sandbox_url: "http://127.0.0.1:9/sandboxes/x", status: "Running" });
    });
    try {
      const key = "the-api-key-0123456789";
      const provider = createRemoteSandboxProvider({ provisioner_url: srv.url, provisioner_api_key: key }, { baseDir });
      const e401 = await provider.acquire("t-auth", { userId: "u1" }).catch((e: unknown) => e);
      expect((e401 as SandboxError).code).toBe("remote_unauthorized");
      expect((e401 as Error).message).toMatch(/refused the credentials \(HTTP 401\).*check sandbox\.provisioner_api_key/);
      expect((e401 as Error).message).not.toContain(key);
      const sent = srv.seen[0];
      expect(sent.method).toBe("POST");
      expect(sent.url).toBe("/api/sandboxes");
      expect(sent.headers["x-api-key"]).toBe(key);
      expect(JSON.parse(sent.body)).toEqual({ sandbox_id: provisionerSandboxId("u1", "t-auth"), thread_id: "t-auth", user_id: "u1", extra_mounts: [] });

      mode = "garbage";
      const bad = await provider.acquire("t-auth", { userId: "u1" }).catch((e: unknown) => e);
      expect((bad as SandboxError).code).toBe("remote_protocol_error");

      mode = "no-token";
      const noToken = await provider.acquire("t-auth", { userId: "u1" }).catch((e: unknown) => e);
      expect((noToken as SandboxError).code).toBe("remote_protocol_error");
      expect((noToken as Error).message).toMatch(/returned no sandbox_token/);
      await provider.shutdown();
    } finally {
      await srv.close();
    }
  });

  it("a command API that goes away mid-run fails the call, not the process, and the token travels only in its header", async () => {
    const token = "tok_".padEnd(43, "z");
    let cmdUrl = "";
    const cmd = await serveOn((req, res) => {
      if (req.url === "/sandboxes/s1/v1/exec") return json(res, 200, { stdout: "ok\n", stderr: "", exit_code: 0, timed_out: false, truncated: false });
      json(res, 404, { detail: "nope" });
    });
    cmdUrl = `${cmd.url}/sandboxes/s1`;
    const prov = await serveOn((req, res) => {
      if (req.method === "POST") return json(res, 200, { sandbox_id: "s1", sandbox_url: cmdUrl, status: "Running", sandbox_token: token });
      json(res, 200, { ok: true, sandbox_id: "s1" });
    });
    const provider = createRemoteSandboxProvider({ provisioner_url: prov.url, provisioner_api_key: "k".repeat(20), idle_timeout: 0 }, { baseDir, warn: () => {} });
    try {
      const id = await provider.acquire("t-mid");
      const sb = provider.get(id);
      expect(await sb?.executeCommand("echo ok")).toEqual({ stdout: "ok\n", stderr: "", exitCode: 0, timedOut: false, truncated: false });
      const exec = cmd.seen.find((s) => s.url.endsWith("/v1/exec"));
      expect(exec?.headers["x-sandbox-token"]).toBe(token);
      expect(exec?.url).not.toContain(token);
      expect(JSON.parse(exec?.body ?? "{}")).toMatchObject({ command: "echo ok", timeout_ms: 600_000 });
      await cmd.close();
      const err = await sb?.executeCommand("echo again").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxError);
      expect((err as SandboxError).code).toBe("remote_unreachable");
      expect((err as Error).message).not.toContain(token);
      await provider.release(id);
      expect(prov.seen.some((s) => s.method === "DELETE" && s.url === `/api/sandboxes/${provisionerSandboxId("default", "t-mid")}`)).toBe(true);
    } finally {
      await provider.shutdown();
      await prov.close();
    }
  });
});
