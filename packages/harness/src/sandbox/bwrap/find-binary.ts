import { accessSync, constants } from "node:fs";
import path from "node:path";

/** Absolute path of an executable found on PATH (plus the usual system dirs), or undefined. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];
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
