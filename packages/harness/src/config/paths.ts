import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors";
import type { ConfigEnv } from "./env";

/** Inputs of path resolution. */
export interface ConfigPathOptions {
  /** Explicit path (highest priority; must exist). */
  path?: string | null;
  /** Working directory for relative lookups (default `process.cwd()`). */
  cwd?: string;
  /** Environment (default `process.env`). */
  env?: ConfigEnv;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Where `config.yaml` is, in DeerFlow's order:
 * 1. the explicit path; 2. `DEER_FLOW_CONFIG_PATH` (a missing file is an error);
 * 3. `$DEER_FLOW_PROJECT_ROOT/config.yaml`; 4. `./config.yaml`; 5. `../config.yaml`.
 * Throws a {@link ConfigError} (`config_not_found`) listing what was searched.
 */
export function resolveConfigPath(options: ConfigPathOptions = {}): string {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  if (options.path) {
    const p = path.resolve(cwd, options.path);
    if (!isFile(p)) throw new ConfigError(`Config file not found at ${p} (given explicitly).`, { code: "config_not_found", details: { file: p } });
    return p;
  }
  const fromEnv = env.DEER_FLOW_CONFIG_PATH;
  if (fromEnv) {
    const p = path.resolve(cwd, fromEnv);
    if (!isFile(p)) {
      throw new ConfigError(`Config file not found at ${p} (from environment variable DEER_FLOW_CONFIG_PATH).`, {
        code: "config_not_found",
        details: { file: p },
      });
    }
    return p;
  }
  const candidates: string[] = [];
  if (env.DEER_FLOW_PROJECT_ROOT) candidates.push(path.resolve(cwd, env.DEER_FLOW_PROJECT_ROOT, "config.yaml"));
  candidates.push(path.join(cwd, "config.yaml"), path.join(path.dirname(cwd), "config.yaml"));
  for (const c of candidates) if (isFile(c)) return c;
  throw new ConfigError(
    `No config.yaml found. Searched:\n${candidates.map((c) => `  - ${c}`).join("\n")}\n` +
      `Copy config.example.yaml to config.yaml, or point DEER_FLOW_CONFIG_PATH at your file.`,
    { code: "config_not_found", details: { searched: candidates } },
  );
}

/** Inputs of extensions path resolution. */
export interface ExtensionsPathOptions extends ConfigPathOptions {
  /** Directory of the resolved `config.yaml` (searched first). */
  configDir?: string | null;
}

/**
 * Where `extensions_config.json` is: explicit path → `DEER_FLOW_EXTENSIONS_CONFIG_PATH`
 * (both must exist) → next to config.yaml → cwd → parent dir (each also
 * accepting the legacy name `mcp_config.json`). Null when there is none
 * (extensions are optional).
 */
export function resolveExtensionsConfigPath(options: ExtensionsPathOptions = {}): string | null {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  if (options.path) {
    const p = path.resolve(cwd, options.path);
    if (!isFile(p)) throw new ConfigError(`Extensions config file not found at ${p} (given explicitly).`, { code: "config_not_found", details: { file: p } });
    return p;
  }
  const fromEnv = env.DEER_FLOW_EXTENSIONS_CONFIG_PATH;
  if (fromEnv) {
    const p = path.resolve(cwd, fromEnv);
    if (!isFile(p)) {
      throw new ConfigError(`Extensions config file not found at ${p} (from environment variable DEER_FLOW_EXTENSIONS_CONFIG_PATH).`, {
        code: "config_not_found",
        details: { file: p },
      });
    }
    return p;
  }
  const dirs = [options.configDir, cwd, path.dirname(cwd)].filter((d): d is string => !!d).map((d) => path.resolve(d));
  for (const name of ["extensions_config.json", "mcp_config.json"]) {
    for (const d of [...new Set(dirs)]) {
      const p = path.join(d, name);
      if (existsSync(p) && isFile(p)) return p;
    }
  }
  return null;
}
