import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { EVERYTHING } from "./_helpers";

/** A streamable-HTTP MCP server (official SDK, stateless) on 127.0.0.1 that records request headers and can require a bearer token. */
export async function startHttpMcpServer(options: { acceptToken?: (token: string) => boolean } = {}) {
  const seen: Array<Record<string, string | string[] | undefined>> = [];
  let rejected = 0;
  const server = createServer((req, res) => {
    seen.push({ ...req.headers });
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    if (options.acceptToken && !(auth && options.acceptToken(auth[1]))) {
      rejected++;
      res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"', "content-type": "application/json" });
      res.end(JSON.stringify({ error: "invalid_token" }));
      return;
    }
    const mcp = new McpServer({ name: "http-double", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "Report the request's X-Team header.", inputSchema: { note: z.string().optional() } }, async () => ({
      content: [{ type: "text", text: `team=${String(req.headers["x-team"] ?? "")}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url,
    seen,
    get rejected() {
      return rejected;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Run server-everything in `streamableHttp` or `sse` mode on a free port; resolves once it listens. */
export async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start`)), 15_000);
    child.stderr?.on("data", (d: Buffer) => {
      if (/listening|running/i.test(d.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}${mode === "sse" ? "/sse" : "/mcp"}`,
    stop: () =>
      new Promise<void>((r) => {
        child.once("exit", () => r());
        child.kill("SIGTERM");
      }),
  };
}
