import type { LoadedAppConfig } from "@deerflow-ts/harness/config";
import type { Finding } from "./doctor";

/**
 * The loader's findings as doctor findings: a key of config.yaml that nothing
 * reads is an error (a misspelt `memroy:` silently leaves that feature at its
 * defaults); every other loader warning stays a warning.
 */
export function configLoadFindings(loaded: Pick<LoadedAppConfig, "warnings" | "unknownKeys">): Finding[] {
  const unknown = new Set(loaded.unknownKeys.map((k) => k.message));
  const out: Finding[] = loaded.unknownKeys.map((k) => ({
    check: "config",
    level: "error" as const,
    message: k.message,
    fix: k.suggestion
      ? `Rename ${k.key} to ${k.suggestion} at ${k.file}:${k.line}, or remove it.`
      : `Remove ${k.key} at ${k.file}:${k.line} (config.example.yaml lists the keys of each section).`,
  }));
  for (const w of loaded.warnings) if (!unknown.has(w)) out.push({ check: "config", level: "warn", message: w });
  return out;
}
