import { existsSync, readFileSync } from "node:fs";
import { parse as parseDotEnv } from "dotenv";
import { ConfigError } from "../errors";
import { formatKeyPath } from "./key-path";
import type { KeyPath } from "./key-path";

/** An environment to read variables from (defaults to `process.env`). */
export type ConfigEnv = Record<string, string | undefined>;

/**
 * Load `.env` files into `env`, first file first. A variable that is already
 * set (in the real environment or by an earlier file) is never overridden.
 * Returns the files that were read.
 */
export function loadDotEnvFiles(files: readonly string[], env: ConfigEnv = process.env): string[] {
  const loaded: string[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const parsed = parseDotEnv(readFileSync(file));
    for (const [key, value] of Object.entries(parsed)) {
      if (env[key] === undefined) env[key] = value;
    }
    loaded.push(file);
  }
  return loaded;
}

/** A `$VAR` reference that has no value in the environment. */
export interface MissingEnvVar {
  name: string;
  keyPath: string;
}

const WHOLE_REF = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;

/**
 * The variable name a config string refers to, or null. Only whole values
 * count: `$OPENAI_API_KEY` or `${OPENAI_API_KEY}`; `"pre $X"` is a plain string.
 * A string that starts with `$` but is not a valid name (e.g. `$5 plan`) is
 * returned as-is by DeerFlow's rule too, so we treat it as a literal.
 */
export function envReferenceName(value: string): string | null {
  const m = WHOLE_REF.exec(value);
  return m ? (m[1] ?? m[2]) : null;
}

/**
 * Replace every whole-string `$VAR` value in a parsed document (deep, values
 * only, never keys). Missing variables are collected, not thrown.
 */
export function substituteEnvVars(
  value: unknown,
  env: ConfigEnv,
  onMissing: "collect" | "empty" = "collect",
): { value: unknown; missing: MissingEnvVar[] } {
  const missing: MissingEnvVar[] = [];
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === "string") {
      const name = envReferenceName(v);
      if (!name) return v;
      const resolved = env[name];
      if (resolved === undefined) {
        missing.push({ name, keyPath: formatKeyPath(path) });
        return onMissing === "empty" ? "" : v;
      }
      return resolved;
    }
    if (Array.isArray(v)) return v.map((item, i) => walk(item, [...path, i]));
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) out[k] = walk(item, [...path, k]);
      return out;
    }
    return v;
  };
  return { value: walk(value, []), missing };
}

/** Build the error for missing `$VAR`s of a file, naming every key path. */
export function missingEnvVarsError(file: string, missing: readonly MissingEnvVar[]): ConfigError {
  const lines = missing.map((m) => `  - ${m.keyPath}: $${m.name} is not set`);
  const names = [...new Set(missing.map((m) => m.name))];
  return new ConfigError(
    `Environment variable${names.length > 1 ? "s" : ""} ${names.join(", ")} not found, referenced in ${file}:\n` +
      `${lines.join("\n")}\n` +
      `Set ${names.length > 1 ? "them" : "it"} in your shell or in a .env file next to the config file ` +
      `(or in the working directory), or remove the entry that uses ${names.length > 1 ? "them" : "it"}.`,
    { code: "config_env_missing", details: { file, missing: missing.map((m) => ({ ...m })) } },
  );
}

/** Convenience for callers that want a key path string of an arbitrary path. */
export function keyPathOf(path: KeyPath): string {
  return formatKeyPath(path);
}
