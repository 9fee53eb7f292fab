import { yamlLib } from "./yaml-lib";
import type { Document, Pair, Scalar, YAMLMap } from "yaml";
import { ConfigError } from "../errors";

/** The result of {@link upgradeConfig}. */
export interface ConfigUpgradeResult {
  /** The upgraded YAML text (the user's comments and values are kept). */
  text: string;
  /** Key paths that were added from the example, e.g. `tool_output.preview_head_chars`. */
  added: string[];
  fromVersion: number;
  toVersion: number;
}

function parseOrThrow(text: string, label: string): Document {
  const doc = yamlLib().parseDocument(text);
  if (doc.errors.length) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    throw new ConfigError(`YAML syntax error in ${label}${pos ? `:${pos.line}:${pos.col}` : ""}: ${e.message.split("\n")[0]}`, {
      code: "config_syntax",
      details: { file: label, line: pos?.line, column: pos?.col },
    });
  }
  return doc;
}

function keyOf(pair: Pair): string {
  return yamlLib().isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => keyOf(p as Pair) === key) as Pair | undefined;
}

function versionOf(map: YAMLMap | null): number {
  const v = map ? map.get("config_version") : undefined;
  const n = typeof v === "number" ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

/**
 * Merge the sections and keys of `exampleYamlText` that are missing from
 * `userYamlText` into it, keeping the user's values and comments, and set
 * `config_version` to the example's. Lists are never merged (a user's
 * `models:` stays theirs); a user's explicit `null` section is left as-is.
 */
export function upgradeConfig(userYamlText: string, exampleYamlText: string): ConfigUpgradeResult {
  const user = parseOrThrow(userYamlText, "config.yaml");
  const example = parseOrThrow(exampleYamlText, "config.example.yaml");
  if (!yamlLib().isMap(example.contents)) throw new ConfigError("config.example.yaml must be a mapping at the top level.");
  if (user.contents == null || (yamlLib().isScalar(user.contents) && user.contents.value == null)) user.contents = user.createNode({}) as never;
  if (!yamlLib().isMap(user.contents)) throw new ConfigError("config.yaml must be a mapping at the top level.");
  const userRoot = user.contents as YAMLMap;
  const exampleRoot = example.contents as YAMLMap;
  const fromVersion = versionOf(userRoot);
  const toVersion = versionOf(exampleRoot);
  const added: string[] = [];

  const merge = (target: YAMLMap, source: YAMLMap, prefix: string) => {
    for (const item of source.items) {
      const pair = item as Pair;
      const key = keyOf(pair);
      if (key === "config_version" && !prefix) continue;
      const existing = findPair(target, key);
      const keyPath = prefix ? `${prefix}.${key}` : key;
      if (!existing) {
        const keyNode = yamlLib().isScalar(pair.key) ? (pair.key.clone() as Scalar) : new (yamlLib().Scalar)(key);
        const valueNode = pair.value && typeof (pair.value as { clone?: unknown }).clone === "function" ? (pair.value as { clone(): unknown }).clone() : pair.value;
        target.items.push(new (yamlLib().Pair)(keyNode, valueNode));
        added.push(keyPath);
      } else if (yamlLib().isMap(existing.value) && yamlLib().isMap(pair.value)) {
        merge(existing.value, pair.value, keyPath);
      }
    }
  };
  merge(userRoot, exampleRoot, "");

  const versionPair = findPair(userRoot, "config_version");
  if (toVersion > fromVersion || !versionPair) {
    if (versionPair) {
      if (yamlLib().isScalar(versionPair.value)) versionPair.value.value = toVersion;
      else versionPair.value = new (yamlLib().Scalar)(toVersion);
    } else {
      const pair = new (yamlLib().Pair)(new (yamlLib().Scalar)("config_version"), new (yamlLib().Scalar)(toVersion));
      userRoot.items.unshift(pair);
    }
  }
  return { text: user.toString({ lineWidth: 0 }), added, fromVersion, toVersion: Math.max(fromVersion, toVersion) };
}
