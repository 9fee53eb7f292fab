import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import type { ThreadPaths } from "@deerflow-ts/harness/uploads";

/** One produced artifact. */
export interface ProducedArtifact {
  virtualPath: string;
  hostPath: string;
}

async function walk(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await walk(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out;
}

/**
 * Artifacts of a turn: the state's `artifacts` (presented files) plus files
 * in `outputs/` written since `sinceMs`. Virtual paths are mapped to host paths.
 */
export async function producedArtifacts(paths: ThreadPaths, stateArtifacts: readonly string[], sinceMs: number): Promise<ProducedArtifact[]> {
  const seen = new Set<string>();
  const out: ProducedArtifact[] = [];
  const add = (virtualPath: string) => {
    if (seen.has(virtualPath)) return;
    const rel = virtualPath.replace(/^\/?mnt\/user-data\/?/, "");
    if (!virtualPath.replace(/^\//, "").startsWith("mnt/user-data/") || rel.split("/").includes("..")) return;
    seen.add(virtualPath);
    out.push({ virtualPath, hostPath: path.join(paths.userData, rel) });
  };
  for (const a of stateArtifacts) if (typeof a === "string") add(a.startsWith("/") ? a : `/${a}`);
  for (const rel of (await walk(paths.outputs)).sort()) {
    const st = await stat(path.join(paths.outputs, rel)).catch(() => undefined);
    if (st && st.mtimeMs >= sinceMs - 1000) add(`/mnt/user-data/outputs/${rel}`);
  }
  return out;
}
