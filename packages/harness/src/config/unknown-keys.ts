/**
 * Unknown keys of config.yaml: a misspelt `memroy:` or `max_resluts:` is
 * otherwise ignored without a word (the schemas keep unknown keys for
 * extensions). Each one is reported with its file:line:column and the closest
 * known key. The known keys come from the schemas that read them
 * ({@link shapeOf}); the marks below say where free extras are legitimate.
 */
import { yamlLib } from "./yaml-lib";
import type { Document, LineCounter, Node, Pair } from "yaml";
import { memoryBackendConfigSchema, memoryHostConfigSchema } from "./memory-config";
import { sandboxConfigSchema } from "./sandbox-config";
import { webToolEntrySchema } from "./web-tool-config";
import { appConfigSchema } from "./app-config-schema";
import { formatKeyPath } from "./key-path";
import { markKeys, shapeOf } from "./key-shape";
import type { KeyShape } from "./key-shape";
import { modelConfigSchema } from "./model-config-schema";
import * as s from "./sections-schema";

/** One key of config.yaml that nothing reads. */
export interface UnknownConfigKey {
  /** Where it is, e.g. `memory.enabeld`, `tools[0].max_resluts`. */
  keyPath: string;
  /** The key as written. */
  key: string;
  file: string;
  /** 1-based line and column of the key. */
  line: number;
  column: number;
  /** The closest known key at that level, when one is close. */
  suggestion: string | null;
  /** `file:line:col: unknown key …` as users read it. */
  message: string;
}

// Where DeerFlow itself lets a mapping carry extras (pydantic `extra="allow"`), only near misses are reported.
// A model entry's extra keys are the provider's constructor arguments: anything goes there.
markKeys(modelConfigSchema, { policy: "open" });
// Tool entries: the tool reads its own keys (web tools: webToolEntrySchema; sandbox file tools: max_results; InfoQuest: search_time_range…).
markKeys(s.toolConfigSchema, {
  policy: "typos",
  alsoFrom: [webToolEntrySchema],
  extraKeys: ["search_time_range", "fetch_time", "timeout_s", "image_search_time_range", "image_size", "navigation_timeout", "max_content_length", "description"],
});
markKeys(s.toolGroupSchema, { policy: "typos" });
markKeys(s.pluginSchema, { policy: "typos" });
markKeys(s.providerRefSchema, { policy: "typos" });
// sandbox: every provider reads its own keys from the one section (bwrap, docker, remote provisioner, DeerFlow's e2b/boxlite).
markKeys(s.sandboxSchema, {
  policy: "typos",
  alsoFrom: [sandboxConfigSchema],
  extraKeys: ["provisioner_url", "provisioner_api_key", "health_check_skip_seconds", "ownership", "thread_data_mounts", "container_prefix"],
});
// memory: older configs put the backend keys directly under `memory:` (still read, see config/memory-config.ts).
markKeys(s.memorySchema, { alsoFrom: [memoryHostConfigSchema, memoryBackendConfigSchema], extraKeys: ["model_name"] });
// backend_config belongs to the backend `manager_class` names: ours validates its keys, another may read its own.
markKeys(s.memoryBackendSectionSchema, {
  policy: "typos",
  alsoFrom: [memoryBackendConfigSchema],
  extraKeys: ["storage_class", "strict_user_scope", "manifest_filename", "file_lock_timeout_seconds", "fact_eviction_shadow_enabled", "eviction_audit_max_entries"],
});
markKeys(memoryBackendConfigSchema.shape.model, { policy: "open" });
markKeys(memoryBackendConfigSchema.shape.embedding, { policy: "open" });

// DeerFlow's keys this implementation accepts and does not act on (so DeerFlow's own config.yaml loads without a word).
markKeys(s.toolOutputSchema, { extraKeys: ["tool_overrides"] });
markKeys(s.loopDetectionSchema, { extraKeys: ["tool_freq_overrides"] });
markKeys(s.toolProgressSchema, {
  extraKeys: ["stagnation_threshold", "warn_escalation_count", "inject_assessment", "jaccard_similarity_threshold", "min_word_count_for_similarity", "exempt_tools", "max_tracked_threads"],
});
markKeys(s.databaseSchema, { extraKeys: ["checkpoint_cache", "echo_sql", "pool_size", "pool_recycle", "command_timeout"] });
markKeys(s.streamBridgeSchema, { extraKeys: ["max_connections", "recovered_stream_cleanup_delay_seconds"] });
markKeys(s.mcpTasksSchema, {
  extraKeys: [
    "poll_interval_seconds",
    "lease_seconds",
    "max_concurrent_polls",
    "max_poll_backoff_seconds",
    "input_required_poll_interval_seconds",
    "tracking_degraded_after_errors",
    "max_result_bytes",
    "result_preview_max_chars",
  ],
});

/** Restricted Damerau–Levenshtein distance (a swapped pair of letters counts once: `memroy` → `memory`). */
export function keyDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known key closest to `key`, or null when none is close enough to be a likely typo. */
export function closestKey(key: string, known: Iterable<string>): string | null {
  const lower = key.toLowerCase();
  const limit = lower.length <= 4 ? 1 : lower.length <= 8 ? 2 : 3;
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = k.toLowerCase() === lower ? 0 : keyDistance(lower, k.toLowerCase());
    if (d < bestD || (d === bestD && best !== null && k < best)) {
      best = k;
      bestD = d;
    }
  }
  return best !== null && bestD <= limit ? best : null;
}

type Path = (string | number)[];

function resolveNode(node: unknown, doc: Document): unknown {
  return yamlLib().isAlias(node) ? node.resolve(doc) : node;
}

/**
 * Every key of a parsed config.yaml document that no reader knows, in
 * document order. Only mappings whose schema is known are looked into:
 * free-form values (`extensions:`, `channels:`, a plugin's `config:`) never
 * report anything.
 */
export function findUnknownConfigKeys(doc: Document, lineCounter: LineCounter, file: string): UnknownConfigKey[] {
  const out: UnknownConfigKey[] = [];
  const visit = (rawNode: unknown, shape: KeyShape, path: Path, depth: number): void => {
    if (depth > 64) return;
    const node = resolveNode(rawNode, doc);
    if (shape.kind === "union") {
      const wanted = yamlLib().isMap(node) ? ["object", "map"] : yamlLib().isSeq(node) ? ["list"] : [];
      const option = shape.options.find((o) => wanted.includes(o.kind));
      if (option) visit(node, option, path, depth + 1);
      return;
    }
    if (shape.kind === "list") {
      if (yamlLib().isSeq(node)) node.items.forEach((item, i) => visit(item, shape.item, [...path, i], depth + 1));
      return;
    }
    if (!yamlLib().isMap(node)) return;
    for (const item of node.items) {
      const pair = item as Pair<unknown, unknown>;
      const keyNode = pair.key as Node | null;
      const key = yamlLib().isScalar(keyNode) ? String(keyNode.value) : null;
      if (key === null || key === "<<") continue;
      if (shape.kind === "map") {
        visit(pair.value, shape.value, [...path, key], depth + 1);
        continue;
      }
      if (shape.kind !== "object") return;
      const known = shape.keys.get(key);
      if (known) {
        visit(pair.value, known, [...path, key], depth + 1);
        continue;
      }
      if (shape.policy === "open") continue;
      const suggestion = closestKey(key, shape.keys.keys());
      if (shape.policy === "typos" && suggestion === null) continue;
      const pos = keyNode?.range ? lineCounter.linePos(keyNode.range[0]) : { line: 0, col: 0 };
      const keyPath = formatKeyPath([...path, key]);
      const where = pos.line ? `${file}:${pos.line}:${pos.col}` : file;
      out.push({
        keyPath,
        key,
        file,
        line: pos.line,
        column: pos.col,
        suggestion,
        message: `${where}: unknown key ${keyPath}${suggestion ? ` (did you mean ${formatKeyPath([...path, suggestion])}?)` : ""}; it is ignored.`,
      });
    }
  };
  visit(doc.contents, shapeOf(appConfigSchema), [], 0);
  return out;
}
