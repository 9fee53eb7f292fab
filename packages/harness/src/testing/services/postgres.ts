import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect } from "node:net";
import { findBinary, freePort, LocalServerUnavailableError, startProcess, stopProcess, waitUntil } from "./local-server";
import type { LocalServer } from "./local-server";

const PG_BIN_DIRS = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"];

function pgBinary(name: string): string | undefined {
  return findBinary(name, PG_BIN_DIRS.map((d) => path.join(d, name)));
}

/** The uid/gid PostgreSQL runs as when we are root (it refuses to run as root). */
function serviceUser(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const id = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (id.status !== 0) throw new LocalServerUnavailableError("PostgreSQL cannot run as root and there is no 'postgres' user (apt-get install postgresql)");
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/**
 * Start a throwaway PostgreSQL cluster on 127.0.0.1 (initdb into a temp
 * dir, trust auth on loopback only, fsync off: it is test data). Needs
 * Debian's `postgresql` package; throws {@link LocalServerUnavailableError}
 * without it. The URL names database `postgres` as user `postgres`.
 */
export async function startPostgres(options: { port?: number } = {}): Promise<LocalServer> {
  const initdb = pgBinary("initdb");
  const postgres = pgBinary("postgres");
  if (!initdb || !postgres) throw new LocalServerUnavailableError("PostgreSQL is not installed (apt-get install postgresql)");
  const user = serviceUser();
  const dir = mkdtempSync(path.join(tmpdir(), "deerflow-pg-"));
  chmodSync(dir, 0o700);
  if (user) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, "data");
  const init = spawnSync(initdb, ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], {
    encoding: "utf8",
    uid: user?.uid,
    gid: user?.gid,
    cwd: dir,
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  const port = options.port ?? (await freePort());
  const args = ["-D", data, "-h", "127.0.0.1", "-p", String(port), "-k", dir, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300"];
  const { child, output } = startProcess(postgres, args, { uid: user?.uid, gid: user?.gid, cwd: dir });
  try {
    await waitUntil(async () => {
      if (!(await portOpen(port))) return false;
      // accepting TCP is not yet accepting queries: pg_isready-equivalent via a startup round trip is done by callers' pools;
      // the server logs this line once it accepts connections.
      return /ready to accept connections/.test(output());
    }, "postgres", child);
  } catch (err) {
    await stopProcess(child, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${output()}`);
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      // SIGINT is PostgreSQL's fast shutdown.
      await stopProcess(child, "SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
