import { realpathSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { PathAccessError } from "../errors";

/** One virtual → host mapping. */
export interface MountPoint {
  /** Absolute virtual path, e.g. `/mnt/user-data/workspace`. */
  virtual: string;
  /** Absolute host directory. */
  host: string;
  readOnly: boolean;
}

/** A virtual path resolved to a confined host path. */
export interface ResolvedPath {
  /** Normalised virtual path. */
  virtual: string;
  /** Real host path (symlinks resolved), guaranteed inside `rootReal`. */
  host: string;
  /** Real host path of the mount root. */
  rootReal: string;
  mount: MountPoint;
}

/** DeerFlow's traversal refusal. */
export const TRAVERSAL_MESSAGE = "Access denied: path traversal detected";

function isInside(child: string, root: string): boolean {
  return child === root || child.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/**
 * Maps virtual paths to host paths and back. Confinement compares REAL
 * paths (symlinks followed), never strings of the request: a symlink planted
 * in the workspace that points outside is rejected.
 */
export class PathMapper {
  private readonly mounts: MountPoint[];

  constructor(mounts: MountPoint[]) {
    this.mounts = mounts
      .map((m) => ({ ...m, virtual: path.posix.normalize(m.virtual).replace(/\/+$/, "") || "/", host: path.resolve(m.host) }))
      .sort((a, b) => b.virtual.length - a.virtual.length);
  }

  /** The mounts, longest virtual prefix first. */
  list(): readonly MountPoint[] {
    return this.mounts;
  }

  /** Human-readable list of allowed roots (for error messages). */
  allowedRoots(): string {
    return [...new Set(this.mounts.map((m) => m.virtual))].sort().join(", ");
  }

  /**
   * Validate and normalise a virtual path and find its mount (no I/O).
   * @throws PathAccessError on traversal, relative paths or unknown roots.
   */
  locate(virtualPath: string): { virtual: string; mount: MountPoint; rel: string } {
    if (typeof virtualPath !== "string" || virtualPath.length === 0) throw new PathAccessError("Access denied: empty path");
    if (virtualPath.includes("\0")) throw new PathAccessError("Access denied: path contains a NUL byte");
    if (virtualPath.replace(/\\/g, "/").split("/").includes("..")) throw new PathAccessError(TRAVERSAL_MESSAGE);
    if (!virtualPath.startsWith("/")) {
      throw new PathAccessError(`Access denied: path must be absolute (e.g. /mnt/user-data/workspace/…): ${virtualPath}`);
    }
    const virtual = path.posix.normalize(virtualPath).replace(/(.)\/+$/, "$1");
    for (const mount of this.mounts) {
      if (virtual === mount.virtual || virtual.startsWith(`${mount.virtual}/`)) {
        return { virtual, mount, rel: virtual.slice(mount.virtual.length).replace(/^\/+/, "") };
      }
    }
    throw new PathAccessError(
      `Access denied: only paths under ${this.allowedRoots()} are allowed: ${virtual}`,
      { details: { path: virtual } },
    );
  }

  /**
   * Resolve a virtual path to a real host path that stays inside its mount.
   * Non-existent tails are resolved from their nearest existing ancestor.
   * @throws PathAccessError on traversal, escape, unknown root, or a write to a read-only mount.
   */
  async resolve(virtualPath: string, options: { write?: boolean } = {}): Promise<ResolvedPath> {
    const { virtual, mount, rel } = this.locate(virtualPath);
    if (options.write && mount.readOnly) throw new PathAccessError(`Access denied: ${virtual} is read-only`);
    let rootReal: string;
    try {
      rootReal = await realpath(mount.host);
    } catch {
      throw new PathAccessError(`Access denied: ${mount.virtual} is not available`);
    }
    const candidate = rel ? path.join(mount.host, rel) : mount.host;
    let existing = candidate;
    const tail: string[] = [];
    let real: string | undefined;
    for (;;) {
      try {
        real = await realpath(existing);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
        // A dangling symlink must not be treated as "missing": its target may be outside.
        const st = await lstat(existing).catch(() => null);
        if (st?.isSymbolicLink()) throw new PathAccessError(`Access denied: ${virtual} resolves outside the allowed directories`);
        const parent = path.dirname(existing);
        if (parent === existing) break;
        tail.unshift(path.basename(existing));
        existing = parent;
      }
    }
    const host = real ? path.join(real, ...tail) : candidate;
    if (!isInside(host, rootReal)) {
      throw new PathAccessError(`Access denied: ${virtual} resolves outside the allowed directories`, {
        details: { path: virtual },
      });
    }
    return { virtual, host, rootReal, mount };
  }

  /** Virtual path of a host path inside a mount, or undefined. */
  toVirtual(hostPath: string): string | undefined {
    const abs = path.resolve(hostPath);
    for (const m of [...this.mounts].sort((a, b) => b.host.length - a.host.length)) {
      for (const root of this.hostAliases(m)) {
        if (isInside(abs, root)) return path.posix.join(m.virtual, abs.slice(root.length));
      }
    }
    return undefined;
  }

  /** Replace every host mount path occurring in `text` by its virtual path. */
  mask(text: string): string {
    if (!text) return text;
    const pairs: Array<[string, string]> = [];
    for (const m of this.mounts) for (const h of this.hostAliases(m)) pairs.push([h, m.virtual]);
    pairs.sort((a, b) => b[0].length - a[0].length);
    let out = text;
    for (const [host, virtual] of pairs) if (host.length > 1) out = out.split(host).join(virtual);
    return out;
  }

  private hostAliases(m: MountPoint): string[] {
    const out = [m.host];
    try {
      const r = realpathSync(m.host);
      if (r !== m.host) out.push(r);
    } catch {
      /* not created yet */
    }
    return out;
  }
}
