import { accessSync, constants } from "node:fs";
import path from "node:path";

const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];

/** Options of {@link findBinary}. */
export interface FindBinaryOptions {
  /** The search path (default `process.env.PATH`). */
  envPath?: string;
  /** Also look in the usual system directories (default true). */
  systemDirs?: boolean;
}

/** Absolute path of an executable found on PATH (plus, by default, the usual system dirs), or undefined. */
export function findBinary(name: string, options: FindBinaryOptions = {}): string | undefined {
  const dirs = (options.envPath ?? process.env.PATH ?? "").split(path.delimiter);
  if (options.systemDirs !== false) dirs.push(...SYSTEM_DIRS);
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}
