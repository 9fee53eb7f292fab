import { createRequire } from "node:module";

const requireLib = createRequire(import.meta.url);
let yamlModule: typeof import("yaml") | undefined;

/**
 * The `yaml` library, loaded by the first YAML parsed or written (through its CommonJS build, so config
 * loading, skill frontmatter and agent files keep their synchronous functions): a demo gateway, whose config
 * is built in code, never holds the parser in memory.
 */
export function yamlLib(): typeof import("yaml") {
  yamlModule ??= requireLib("yaml") as typeof import("yaml");
  return yamlModule;
}
