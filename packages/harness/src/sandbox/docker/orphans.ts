import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
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
