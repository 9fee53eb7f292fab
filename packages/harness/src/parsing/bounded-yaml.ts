import { yamlLib } from "../config/yaml-lib";
import { ParseLimitError, utf8Length } from "./limits";

/** Limits of one YAML document. */
export interface YamlLimits {
  /** Max UTF-8 bytes of the document. */
  maxBytes: number;
  /** Max nodes (scalars, aliases, flow collections) counted by a linear lexer pass. */
  maxNodes: number;
  /** Max alias dereferences when building the value (the `yaml` package's `maxAliasCount`). */
  maxAliasCount: number;
}

/**
 * Defaults for YAML the API writes and reads back (custom agents' `config.yaml`).
 * The `yaml` package's composer checks each mapping key against the earlier
 * ones, so parse time grows with the square of a mapping's width: the node
 * cap keeps the worst case in the tens of milliseconds.
 */
export const DEFAULT_YAML_LIMITS: YamlLimits = { maxBytes: 1024 * 1024, maxNodes: 5000, maxAliasCount: 100 };

/** Lexer token types that become a node of the document. */
const NODE_TOKENS: ReadonlySet<string> = new Set(["scalar", "single-quoted-scalar", "double-quoted-scalar", "block-scalar-header", "alias", "flow-map-start", "flow-seq-start", "seq-item-ind", "explicit-key-ind"]);

/**
 * Count the nodes of a YAML text with the lexer only (linear time: no
 * document is composed, so no key comparisons happen), stopping as soon as
 * `stopAt` is passed.
 */
export function countYamlNodes(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let nodes = 0;
  for (const token of new (yamlLib().Lexer)().lex(text)) {
    const type = yamlLib().CST.tokenType(token);
    if (type && NODE_TOKENS.has(type) && ++nodes > stopAt) return nodes;
  }
  return nodes;
}

/**
 * Refuse a YAML text over its byte or node limit, before it is composed.
 * @throws ParseLimitError naming `file`, the limit and the measured value.
 */
export function checkYamlLimits(text: string, file: string, limits: YamlLimits = DEFAULT_YAML_LIMITS, what = "YAML document"): void {
  const bytes = utf8Length(text);
  if (bytes > limits.maxBytes) {
    throw new ParseLimitError(`${file}: ${what} is ${bytes} bytes, over the limit of ${limits.maxBytes} bytes`, { file, limit: "max_bytes", max: limits.maxBytes, actual: bytes });
  }
  const nodes = countYamlNodes(text, limits.maxNodes);
  if (nodes > limits.maxNodes) {
    throw new ParseLimitError(`${file}: ${what} has more than ${limits.maxNodes} keys/values (the limit); refusing to parse it`, { file, limit: "max_nodes", max: limits.maxNodes, actual: nodes });
  }
}

/**
 * Parse YAML into plain data after {@link checkYamlLimits}. Syntax errors
 * (and duplicate keys) are thrown as the `yaml` package's own errors, so a
 * caller keeps its own message wrapping; alias expansion is capped by
 * `maxAliasCount` (a billion-laughs document fails instead of growing).
 * @throws ParseLimitError when a limit is exceeded.
 */
export function parseYamlBounded(text: string, file: string, limits: YamlLimits = DEFAULT_YAML_LIMITS, what?: string): unknown {
  checkYamlLimits(text, file, limits, what);
  const doc = yamlLib().parseDocument(text);
  if (doc.errors.length) throw doc.errors[0];
  return doc.toJS({ maxAliasCount: limits.maxAliasCount });
}
