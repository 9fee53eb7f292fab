import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { BwrapBind } from "./argv";

/**
 * Why staging exists: bubblewrap resolves every bind source with the
 * credentials it runs under. When the service is root and drops to the
 * sandbox uid (setpriv), a data dir under a directory that uid cannot enter
 * (`/root/...`, any 0700 `mkdtemp` parent) cannot be bound — not even with
 * `--bind-fd`, because bwrap resolves the fd's path textually too. Instead
 * of opening those directories up, the command first enters a private mount
 * namespace (still as root), mounts a small tmpfs over {@link STAGE_ROOT}
 * there and bind-mounts each source onto `STAGE_ROOT/<n>`, which the sandbox
 * uid can reach; then it drops privileges and starts bwrap on the staged
 * paths. Nothing changes on the host: the namespace and its mounts vanish
 * with the command.
 */
export const STAGE_ROOT = "/mnt";

/** The uid/gid whose search permission is checked. */
export interface SearchIdentity {
  uid: number;
  gid: number;
}

/** Whether `id` may search (enter) a directory with this owner and mode (ACLs ignored: we only under-approximate). */
function canSearch(st: { uid: number; gid: number; mode: number }, id: SearchIdentity): boolean {
  if (st.uid === id.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === id.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * The first directory above `hostPath` (after resolving symlinks) that `id`
 * cannot enter, or undefined when the whole chain is searchable. Missing
 * paths are checked as far as they exist.
 */
export function searchBlocker(hostPath: string, id: SearchIdentity): string | undefined {
  let target = path.resolve(hostPath);
  try {
    target = realpathSync(target);
  } catch {
    /* missing: check the lexical chain */
  }
  const chain: string[] = [];
  for (let dir = path.dirname(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of chain) {
    let st;
    try {
      st = statSync(dir);
    } catch {
      return undefined;
    }
    if (!canSearch(st, id)) return dir;
  }
  return undefined;
}

/** Binaries the staging step runs as root before dropping privileges. */
export interface StageTools {
  unsharePath: string;
  mountPath: string;
}

/**
 * The staging prefix: `unshare --mount … /bin/sh -c SCRIPT stage N host… --`
 * followed by the real command. Sources are positional arguments, never
 * spliced into the script text.
 */
export function stagePrefix(tools: StageTools, hosts: readonly string[]): string[] {
  const mount = tools.mountPath.replace(/'/g, `'\\''`);
  // One mkdir for every directory mount point (execs are the cost here); files get an empty file.
  const script = [
    "set -e",
    "n=$1; shift",
    `'${mount}' -t tmpfs -o mode=0755,size=64k,nosuid,nodev,noexec deerflow-stage ${STAGE_ROOT}`,
    'i=0; dirs=""',
    'for p in "$@"; do',
    '  [ "$i" -lt "$n" ] || break',
    `  if [ -d "$p" ]; then dirs="$dirs ${STAGE_ROOT}/$i"; else : > "${STAGE_ROOT}/$i"; fi`,
    "  i=$((i + 1))",
    "done",
    '[ -z "$dirs" ] || mkdir $dirs',
    "i=0",
    'while [ "$i" -lt "$n" ]; do',
    `  '${mount}' --bind "$1" "${STAGE_ROOT}/$i"`,
    "  shift; i=$((i + 1))",
    "done",
    'exec "$@"',
  ].join("\n");
  return [tools.unsharePath, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "deerflow-stage", String(hosts.length), ...hosts];
}

/** What to stage and what bwrap then binds. */
export interface StagePlan {
  /** Host paths mounted at `STAGE_ROOT/<index>`. */
  hosts: string[];
  /** The binds rewritten to staged paths. */
  binds: BwrapBind[];
}

/**
 * Stage as few mounts as possible (each is an exec): a source whose parent
 * the sandbox uid may enter is reached through its staged parent, so a
 * thread's workspace, uploads and outputs share one mount of `user-data`.
 */
export function planStaging(binds: readonly BwrapBind[], id: SearchIdentity): StagePlan {
  const hosts: string[] = [];
  const index = (host: string) => {
    const at = hosts.indexOf(host);
    return at >= 0 ? at : hosts.push(host) - 1;
  };
  const out = binds.map((b) => {
    // Absolute, so no source can ever be read as an option by mount(8).
    const source = path.resolve(b.host);
    const parent = path.dirname(source);
    let enterable = false;
    try {
      enterable = parent !== source && canSearch(statSync(parent), id);
    } catch {
      enterable = false;
    }
    const host = enterable ? `${STAGE_ROOT}/${index(parent)}/${path.basename(source)}` : `${STAGE_ROOT}/${index(source)}`;
    return { ...b, host };
  });
  return { hosts, binds: out };
}
