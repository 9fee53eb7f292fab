import { randomBytes } from "node:crypto";
import { lstat, mkdir, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import type { ContainerCreateOptions } from "dockerode";
import { ensureThreadDirs } from "../thread-paths";
import type { ThreadDirs } from "../thread-paths";
import type { ContainerDirs } from "./container-spec";
import type { DockerEngine } from "./engine";

/** One pre-created, started container waiting for a new thread. */
interface Slot {
  name: string;
  containerId: string;
  /** `{baseDir}/sandbox-pool/{instance}/{slot}`; its `user-data` becomes the thread's. */
  root: string;
  /** Host skills dir bound into it (slots only fit threads with the same one). */
  skills?: string;
}

/** Options of {@link WarmPool}. */
export interface WarmPoolOptions {
  engine: DockerEngine;
  /** Parent of the slot dirs: `{baseDir}/sandbox-pool/{instance id}` (same filesystem as the thread dirs, for rename). */
  dir: string;
  prefix: string;
  /** Owner of the slot dirs (service running as root). */
  owner?: { uid: number; gid: number };
  /** Create options of a slot container over these dirs. */
  spec(name: string, dirs: ContainerDirs): ContainerCreateOptions;
  /** Asked when a slot is ready: false drops it (room under `replicas` went to idle threads meanwhile). */
  wanted?(): boolean;
  log?(message: string): void;
}

/**
 * Pre-created containers for threads that have no directory yet. Bind mounts
 * are fixed when a container is created, so a slot binds directories of its
 * own — `{baseDir}/sandbox-pool/{instance}/{slot}/user-data/{workspace,uploads,outputs}`
 * — and handing it to a new thread MOVES that `user-data` directory to the
 * thread's place with one rename(2): a bind mount follows the directory, not
 * its path, so the running container now sees exactly the thread's files,
 * and the host side (file tools, uploads, artifacts) uses the thread's
 * ordinary path. Only a thread whose `user-data` does not exist yet can take a
 * slot (anything else is a cold create); a slot created for another skills
 * directory does not fit either. The container is then renamed to the
 * thread's deterministic name (labels cannot change: a taken slot keeps
 * `role=pool`, the provider tracks it).
 */
export class WarmPool {
  private readonly slots: Slot[] = [];
  private filling = 0;
  private closed = false;
  /** Slot creations under way (shutdown waits for them, then removes what they made). */
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly opts: WarmPoolOptions) {}

  /** Slots ready plus being created. */
  get size(): number {
    return this.slots.length + this.filling;
  }

  /** Slots ready now (in-flight creations excluded). */
  get ready(): number {
    return this.slots.length;
  }

  /** Whether every ready slot binds `skills`. */
  fits(skills: string | undefined): boolean {
    return this.slots.every((s) => s.skills === skills);
  }

  /** Names of the ready slots (tests, diagnostics). */
  names(): string[] {
    return this.slots.map((s) => s.name);
  }

  /**
   * Hand a slot to a thread: move its dirs to `dirs.userData`, rename its
   * container to `name`. `undefined` when no slot fits or the thread already
   * has a directory (the caller creates one cold).
   */
  async take(dirs: ThreadDirs, skills: string | undefined, name: string): Promise<string | undefined> {
    const i = this.slots.findIndex((s) => s.skills === skills);
    if (i < 0) return undefined;
    const exists = await lstat(dirs.userData).then(() => true, () => false);
    if (exists) return undefined;
    const [slot] = this.slots.splice(i, 1);
    await mkdir(path.dirname(dirs.userData), { recursive: true });
    try {
      await rename(path.join(slot.root, "user-data"), dirs.userData);
    } catch {
      // Created meanwhile (ENOTEMPTY/EEXIST), or another filesystem (EXDEV): the slot stays usable.
      this.slots.push(slot);
      return undefined;
    }
    await rmdir(slot.root).catch(() => {});
    try {
      await this.opts.engine.renameContainer(slot.containerId, name);
    } catch (err) {
      // The name is taken (a stale container of this thread): the dirs are the thread's now; the caller goes cold.
      this.opts.log?.(`[deerflow] sandbox: could not rename pool container ${slot.name} to ${name}: ${(err as Error).message}`);
      await this.opts.engine.removeContainer(slot.containerId).catch(() => false);
      return undefined;
    }
    return slot.containerId;
  }

  /** Create slots (for `skills`) until `count` are ready or being created. */
  async fill(count: number, skills: string | undefined): Promise<void> {
    const jobs: Promise<void>[] = [];
    while (!this.closed && this.size < count) {
      this.filling++;
      const job: Promise<void> = this.createSlot(skills)
        .then(async (slot) => {
          // Counted as ready from here on, so `wanted` sees the slots already kept.
          if (this.closed || (this.opts.wanted && !this.opts.wanted())) await this.destroy(slot);
          else this.slots.push(slot);
        })
        .catch((err: unknown) => this.opts.log?.(`[deerflow] sandbox: warm pool container not created: ${(err as Error).message}`))
        .finally(() => {
          this.filling--;
          this.inflight.delete(job);
        });
      this.inflight.add(job);
      jobs.push(job);
    }
    await Promise.all(jobs);
  }

  private async createSlot(skills: string | undefined): Promise<Slot> {
    const id = randomBytes(6).toString("hex");
    const name = `${this.opts.prefix}-pool-${id}`;
    const root = path.join(this.opts.dir, id);
    const userData = path.join(root, "user-data");
    const dirs: ThreadDirs = { userData, workspace: path.join(userData, "workspace"), uploads: path.join(userData, "uploads"), outputs: path.join(userData, "outputs") };
    await ensureThreadDirs(dirs, this.opts.owner);
    let containerId: string | undefined;
    try {
      containerId = await this.opts.engine.createContainer(this.opts.spec(name, { ...dirs, skills }));
      await this.opts.engine.startContainer(containerId);
      return { name, containerId, root, skills };
    } catch (err) {
      if (containerId) await this.opts.engine.removeContainer(containerId).catch(() => false);
      await rm(root, { recursive: true, force: true });
      throw err;
    }
  }

  private async destroy(slot: Slot): Promise<void> {
    await this.opts.engine.removeContainer(slot.containerId).catch(() => false);
    await rm(slot.root, { recursive: true, force: true });
  }

  /** Remove the oldest ready slot (to make room under `replicas`); false when none. */
  async evictOne(): Promise<boolean> {
    const slot = this.slots.shift();
    if (!slot) return false;
    await this.destroy(slot);
    return true;
  }

  /** Remove the ready slots made for another skills dir (the pool follows the user who acquired last). */
  async evictMismatched(skills: string | undefined): Promise<void> {
    const stale = this.slots.filter((s) => s.skills !== skills);
    for (const slot of stale) this.slots.splice(this.slots.indexOf(slot), 1);
    await Promise.all(stale.map((s) => this.destroy(s)));
  }

  /** Remove every slot (shutdown). */
  async drain(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.inflight]);
    const all = this.slots.splice(0);
    await Promise.all(all.map((s) => this.destroy(s)));
    await rmdir(this.opts.dir).catch(() => {});
  }
}
