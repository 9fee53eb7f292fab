import path from "node:path";
import type { BwrapBind } from "../bwrap/argv";

/** Where the sandbox sees its network directory (the proxy socket and the forwarder script), read-only. */
export const SANDBOX_NET_DIR = "/run/deerflow-net";
/** Where the host's node binary is bound when it lives outside `/usr` (which the sandbox already sees). */
export const SANDBOX_NODE_PATH = "/run/deerflow-node";
/** File names inside the network directory. */
export const PROXY_SOCKET_NAME = "egress.sock";
export const FORWARDER_SCRIPT_NAME = "forwarder.cjs";
/** The sandbox-local port the forwarder listens on (each command has its own network namespace). */
export const FORWARDER_PORT = 3128;

/**
 * The forwarder, run by the host's node inside the sandbox: it accepts TCP
 * on 127.0.0.1:{@link FORWARDER_PORT} (the only network the sandbox has)
 * and copies each connection to the proxy's Unix socket. It enforces
 * nothing — the host-side proxy does — so a command that kills or replaces
 * it gains nothing. Readiness is written to fd 9 (then closed) so the shell
 * can wait for the listener instead of guessing.
 */
export const FORWARDER_SCRIPT = `"use strict";
const net = require("node:net");
const fs = require("node:fs");
const port = Number(process.argv[2]);
const target = process.argv[3];
const server = net.createServer((client) => {
  const upstream = net.connect(target);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on("error", (err) => {
  try { fs.writeSync(2, "deerflow sandbox network: forwarder failed: " + err.message + "\\n"); } catch {}
  process.exit(1);
});
server.listen(port, "127.0.0.1", () => {
  fs.writeSync(9, "ready\\n");
  fs.closeSync(9);
});
`;

/** Single-quote a string for /bin/sh. */
function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The node binary as seen inside the sandbox. */
export function sandboxNodePath(hostNode: string): string {
  return hostNode.startsWith("/usr/") ? hostNode : SANDBOX_NODE_PATH;
}

/**
 * Binds a network-mode command needs: the sandbox's network directory
 * (read-only; connecting to a socket needs no write access to its mount)
 * and the node binary when it is outside `/usr`.
 */
export function networkBinds(netDir: string, hostNode: string): BwrapBind[] {
  const binds: BwrapBind[] = [{ host: netDir, dest: SANDBOX_NET_DIR, readOnly: true }];
  if (!hostNode.startsWith("/usr/")) binds.push({ host: hostNode, dest: SANDBOX_NODE_PATH, readOnly: true });
  return binds;
}

/**
 * Proxy variables every common client reads (curl, wget, pip, npm, git,
 * python requests, undici with `NODE_USE_ENV_PROXY`). Loopback bypasses the
 * proxy: inside the sandbox it is the sandbox's own namespace (servers the
 * command started), never the host's.
 */
export function networkEnv(): Record<string, string> {
  const proxy = `http://127.0.0.1:${FORWARDER_PORT}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    ALL_PROXY: proxy,
    all_proxy: proxy,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    NODE_USE_ENV_PROXY: "1",
  };
}

/**
 * Shell lines run before the command: start the forwarder in the background
 * (it dies with the sandbox's PID namespace when the command ends) and wait
 * until it listens — the command substitution returns when the forwarder
 * closes fd 9 after `listen`, or when it exits. `NODE_OPTIONS` is cleared so
 * `sandbox.environment` cannot change how the forwarder starts.
 */
export function forwarderPrelude(hostNode: string): string {
  const node = shQuote(sandboxNodePath(hostNode));
  const script = shQuote(path.posix.join(SANDBOX_NET_DIR, FORWARDER_SCRIPT_NAME));
  const socket = shQuote(path.posix.join(SANDBOX_NET_DIR, PROXY_SOCKET_NAME));
  return [
    `deerflow_net_ready=$(NODE_OPTIONS= ${node} ${script} ${FORWARDER_PORT} ${socket} 9>&1 </dev/null >/dev/null 2>/dev/null &)`,
    `if [ "$deerflow_net_ready" != ready ]; then echo "deerflow sandbox network: the egress forwarder did not start; no network for this command" >&2; exit 125; fi`,
    "unset deerflow_net_ready",
    "",
  ].join("\n");
}
