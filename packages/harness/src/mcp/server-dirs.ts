import { createHash, randomBytes } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdirSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { McpError } from "./errors";

/** Directory under the data dir holding one launch directory per stdio MCP server. */
export const MCP_SERVERS_DIR = "mcp-servers";

/**
 * The host directories of one stdio MCP server: `root` is the process cwd
 * (read-only for the server when sandboxed), `home`/`cache` persist across
 * its sessions, `tmp` holds one private temp dir per session, `scratch` the
 * empty user-data a discovery session sees.
 */
export interface McpServerDirs {
  root: string;
  home: string;
  cache: string;
  tmp: string;
  scratch: { userData: string; workspace: string; uploads: string; outputs: string };
}

/** Directory of the launch directory holding one home/cache pair per thread (sandboxed thread sessions). */
export const MCP_THREAD_HOMES_DIR = "threads";

const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** One path segment for a server name: the name itself when it is plain, else a sanitised name plus a hash (distinct names never share a dir). */
export function mcpServerDirName(name: string): string {
  if (PLAIN_NAME.test(name) && name !== "." && name !== "..") return name;
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^[._-]+/, "").slice(0, 48) || "server";
  return `${safe}-${createHash("sha256").update(name).digest("hex").slice(0, 12)}`;
}

/** The directories of server `name` under `dataDir` (nothing is created). */
export function mcpServerDirs(dataDir: string, name: string): McpServerDirs {
  const root = path.join(path.resolve(dataDir), MCP_SERVERS_DIR, mcpServerDirName(name));
  const userData = path.join(root, "scratch", "user-data");
  return {
    root,
    home: path.join(root, "home"),
    cache: path.join(root, "cache"),
    tmp: path.join(root, "tmp"),
    scratch: { userData, workspace: path.join(userData, "workspace"), uploads: path.join(userData, "uploads"), outputs: path.join(userData, "outputs") },
  };
}

const serviceUid = () => (typeof process.getuid === "function" ? process.getuid() : -1);

/**
 * Create a directory owned by the service user and writable only by it
 * (0755). An existing one must already belong to the service user: a
 * launch directory someone else owns could be swapped for one they control.
 */
function serviceDir(dir: string, server: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new McpError(server, `MCP server '${server}': ${dir} must be a directory (it is used as the server's launch directory)`, { code: "mcp_start_failed" });
  const uid = serviceUid();
  if (uid >= 0 && st.uid !== uid) {
    throw new McpError(server, `MCP server '${server}': ${dir} belongs to uid ${st.uid}, not to the service user (uid ${uid}); remove it so it is created again`, { code: "mcp_start_failed" });
  }
  if ((st.mode & 0o022) !== 0) chmodSync(dir, st.mode & 0o7755);
}

/** A directory the server itself writes: owned by `owner` (the sandbox uid) when given, mode 0700. */
function serverWritableDir(dir: string, owner: { uid: number; gid: number } | undefined): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  chmodSync(dir, 0o700);
}

/**
 * Create the launch directories of a server: `{dataDir}/mcp-servers` and
 * the server's root owned by the service user (the server cannot write its
 * own cwd, so no launcher finds a file there it did not put there),
 * `home`/`cache`/`tmp`/scratch user-data owned by `owner` (the uid
 * the sandboxed server runs as) or the service user.
 */
export function ensureMcpServerDirs(dirs: McpServerDirs, server: string, owner?: { uid: number; gid: number }): void {
  serviceDir(path.dirname(dirs.root), server);
  serviceDir(dirs.root, server);
  // Exists for every session: the sandbox covers it (a mount point inside the read-only launch directory).
  serviceDir(path.join(dirs.root, MCP_THREAD_HOMES_DIR), server);
  for (const d of [dirs.home, dirs.cache, dirs.tmp]) serverWritableDir(d, owner);
  serviceDir(path.dirname(dirs.scratch.userData), server);
  serviceDir(dirs.scratch.userData, server);
  for (const d of [dirs.scratch.workspace, dirs.scratch.uploads, dirs.scratch.outputs]) serverWritableDir(d, owner);
}

/**
 * The home and cache of server `dirs` for one thread, created on first use
 * (`{root}/threads/{hash of the thread's user-data path}/`, the key dir owned
 * by the service user, `home`/`cache` by `owner`). Why per thread: a session
 * runs with that thread's files and takes its tool arguments from that
 * thread's agent; a home or cache shared by all threads would let one
 * thread's session plant an `.npmrc` or rewrite the npx-installed package
 * that another thread's next session runs with that thread's files.
 */
export function ensureThreadServerDirs(dirs: McpServerDirs, server: string, threadUserData: string, owner?: { uid: number; gid: number }): { home: string; cache: string } {
  const base = path.join(dirs.root, MCP_THREAD_HOMES_DIR, threadKey(threadUserData));
  serviceDir(path.dirname(base), server);
  serviceDir(base, server);
  const out = { home: path.join(base, "home"), cache: path.join(base, "cache") };
  for (const d of [out.home, out.cache]) serverWritableDir(d, owner);
  return out;
}

function threadKey(threadUserData: string): string {
  return createHash("sha256").update(path.resolve(threadUserData)).digest("hex").slice(0, 24);
}

/**
 * Remove one thread's home and cache from every server's launch directory
 * (when the thread is deleted; its sessions must be closed first).
 * @returns the directories that could not be removed (with the error), for the log.
 */
export async function removeThreadServerDirs(dataDir: string, threadUserData: string): Promise<string[]> {
  const parent = path.join(path.resolve(dataDir), MCP_SERVERS_DIR);
  let servers: string[];
  try {
    servers = await readdir(parent);
  } catch {
    return [];
  }
  const failed: string[] = [];
  for (const name of servers) {
    const dir = path.join(parent, name, MCP_THREAD_HOMES_DIR, threadKey(threadUserData));
    try {
      await rm(dir, { recursive: true, force: true });
    } catch (err) {
      failed.push(`${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  return failed;
}

/** A fresh private temp dir for one session (removed by the returned function when the session ends). */
export function sessionTmpDir(dirs: McpServerDirs, owner?: { uid: number; gid: number }): { dir: string; remove: () => void } {
  const dir = path.join(dirs.tmp, `s-${randomBytes(6).toString("hex")}`);
  serverWritableDir(dir, owner);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Whether `inner` is `outer` or inside it (lexically, both resolved). */
export function isWithin(inner: string, outer: string): boolean {
  const rel = path.relative(path.resolve(outer), path.resolve(inner));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}
