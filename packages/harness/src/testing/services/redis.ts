import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect } from "node:net";
import { findBinary, freePort, LocalServerUnavailableError, startProcess, stopProcess, waitUntil } from "./local-server";
import type { LocalServer } from "./local-server";

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    let buf = "";
    s.once("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      buf += d.toString();
      if (buf.includes("\r\n")) {
        s.destroy();
        resolve(buf.startsWith("+PONG"));
      }
    });
    s.once("error", () => resolve(false));
  });
}

/**
 * Start a throwaway redis-server on 127.0.0.1 (no persistence, protected
 * mode on, loopback only). Needs Debian's `redis-server`; throws
 * {@link LocalServerUnavailableError} without it.
 */
export async function startRedis(options: { port?: number } = {}): Promise<LocalServer> {
  const bin = findBinary("redis-server", ["/usr/bin/redis-server"]);
  if (!bin) throw new LocalServerUnavailableError("Redis is not installed (apt-get install redis-server)");
  const dir = mkdtempSync(path.join(tmpdir(), "deerflow-redis-"));
  const port = options.port ?? (await freePort());
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "yes"];
  const { child, output } = startProcess(bin, args, { cwd: dir });
  try {
    await waitUntil(() => ping(port), "redis-server", child);
  } catch (err) {
    await stopProcess(child, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${output()}`);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await stopProcess(child, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
