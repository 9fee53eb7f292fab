import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { cliAssetPath, runsFromCheckout } from "../package-assets";
import { resolveConfigPath, upgradeConfig } from "@deerflow-ts/harness/config";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow config`. */
export const CONFIG_HELP = `Usage: deerflow config upgrade [options]

Merge the default sections and keys of config.example.yaml that are missing
from your config.yaml into it. Your values, lists (models:) and comments are
kept; config_version is raised. A backup is written to config.yaml.bak.

Options:
  --example PATH     the example to merge from (default: config.example.yaml next
                     to config.yaml, in the working directory, or at the repo root)
  --dry-run          print what would be added without writing
${COMMON_HELP}`;

/**
 * Where to look for config.example.yaml: beside the config, the working directory, then the copy this
 * package ships (the repository's own in a checkout, `assets/` when installed).
 */
export function exampleCandidates(configFile: string, cwd: string): string[] {
  const shipped = cliAssetPath("config.example.yaml", "config.example.yaml");
  return [
    path.join(path.dirname(configFile), "config.example.yaml"),
    path.join(cwd, "config.example.yaml"),
    shipped,
    ...(runsFromCheckout() ? [path.resolve(shipped, "..", "..", "shared", "fixtures", "deerflow", "config.example.yaml")] : []),
  ];
}

/** `deerflow config <sub>`. */
export async function configCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand("config", argv, { example: { type: "string" }, "dry-run": { type: "boolean" } }, true);
  if (values.help || !positionals.length) {
    term.line(CONFIG_HELP);
    return values.help ? 0 : 2;
  }
  if (positionals[0] !== "upgrade") throw new UsageError(`unknown config subcommand '${positionals[0]}' (expected: upgrade)`, "config");
  const common = commonOptions(values);
  const file = resolveConfigPath({ path: common.configPath, cwd: common.cwd });
  const example = values.example ? path.resolve(common.cwd, values.example) : exampleCandidates(file, common.cwd).find((p) => existsSync(p));
  if (!example || !existsSync(example)) {
    throw new UsageError(`config.example.yaml not found (looked next to ${file}, in ${common.cwd} and the repo root); pass --example PATH`, "config");
  }
  const result = upgradeConfig(readFileSync(file, "utf8"), readFileSync(example, "utf8"));
  if (!result.added.length && result.fromVersion >= result.toVersion) {
    term.line(`${file} is up to date (config_version ${result.fromVersion}).`);
    return 0;
  }
  term.line(`config_version ${result.fromVersion} → ${result.toVersion}; ${result.added.length} key(s) added from ${example}:`);
  for (const k of result.added) term.line(`  + ${k}`);
  if (values["dry-run"]) {
    term.line("(dry run: nothing written)");
    return 0;
  }
  copyFileSync(file, `${file}.bak`);
  writeFileSync(file, result.text);
  term.line(`Updated ${file} (backup: ${file}.bak)`);
  return 0;
}
