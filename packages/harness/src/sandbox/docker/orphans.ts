import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import os from "node:os";
import { LABELS, MANAGED_BY } from "./container-spec";
import type { OwnerIdentity } from "./container-spec";
import type { ContainerSummary, DockerEngine } from "./engine";

/** Start time of a process (field 22 of /proc/pid/stat, clock ticks since boot), or "" when unknown. */
export function processStartTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19] ?? "";
  } catch {
    return "";
  }
}

/** The identity of this process as a container owner, with a fresh instance id. */
export function currentOwner(instanceId: string = randomBytes(8).toString("hex")): OwnerIdentity {
  return { instanceId, hostname: os.hostname(), pid: process.pid, pidStart: processStartTime(process.pid) };
}

/** Whether the process that labelled a container is gone (only decidable for containers made on this host). */
export function ownerIsDead(labels: Record<string, string>, hostname: string = os.hostname()): boolean {
  if (labels[LABELS.host] !== hostname) return false;
  const pid = Number(labels[LABELS.pid]);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, owned by someone else.
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
  // Alive — unless the pid was reused by another process since.
  const recorded = labels[LABELS.pidStart];
  return recorded !== undefined && recorded !== "" && recorded !== processStartTime(pid);
}

/**
 * Remove the containers of ours whose creating process is gone (on this
 * host): a crashed or killed server leaves its sandboxes running, and nothing
 * else would ever remove them. Containers of live processes, of other hosts
 * sharing the daemon, and of this instance are left alone.
 * @returns the names removed.
 */
export async function reclaimOrphans(engine: DockerEngine, self: OwnerIdentity): Promise<string[]> {
  const all: ContainerSummary[] = await engine.listContainers({ [LABELS.managedBy]: MANAGED_BY });
  const removed: string[] = [];
  for (const c of all) {
    if (c.labels[LABELS.instance] === self.instanceId) continue;
    if (!ownerIsDead(c.labels, self.hostname)) continue;
    if (await engine.removeContainer(c.id)) removed.push(c.name);
  }
  return removed;
}

/** A pool directory of another instance is only removed once it is this old and that instance has no container left. */
const STALE_POOL_DIR_MS = 10 * 60_000;

/**
 * Remove the warm-pool slot dirs (`{root}/{instance id}`) of provider instances that are gone: older than
 * 10 minutes (a live instance may be creating its first slot) and without any container left.
 */
export async function reclaimPoolDirs(engine: DockerEngine, root: string, selfInstance: string): Promise<void> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    if (name === selfInstance || !/^[0-9a-f]{16}$/.test(name)) continue;
    const s = await stat(path.join(root, name)).catch(() => undefined);
    if (!s || Date.now() - s.mtimeMs < STALE_POOL_DIR_MS) continue;
    if ((await engine.listContainers({ [LABELS.instance]: name })).length) continue;
    await rm(path.join(root, name), { recursive: true, force: true });
  }
}

/**
 * Remove the container named `name` when its labels say it is a thread container of ours for exactly this
 * user and thread (another server process of the deployment may have created it); anything else by that
 * name is left alone. No-op when there is none.
 */
export async function removeThreadContainer(engine: DockerEngine, name: string, owner: { threadId: string; userId: string }): Promise<void> {
  const found = await engine.inspectContainer(name);
  if (!found || found.labels[LABELS.managedBy] !== MANAGED_BY || found.labels[LABELS.thread] !== owner.threadId || found.labels[LABELS.user] !== owner.userId) return;
  await engine.removeContainer(found.id);
}
