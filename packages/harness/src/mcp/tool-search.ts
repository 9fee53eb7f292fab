import { createHash } from "node:crypto";
import { z } from "zod";
import { toolMessage } from "../messages";
import { Command } from "../state";
import { PatternMatcher } from "../sandbox";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";
import type { McpRoutingHint } from "./routing";
import { isMcpTool } from "./tool-adapter";

/** Results of a ranked `tool_search` query (DeerFlow's MAX_RESULTS). */
export const TOOL_SEARCH_MAX_RESULTS = 5;

/** The name of the discovery tool. */
export const TOOL_SEARCH_TOOL_NAME = "tool_search";

/** An OpenAI-style function schema, what `tool_search` returns per tool. */
export interface FunctionSchema {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

function regexOf(pattern: string): RegExp {
  // Queries come from the model: an invalid pattern degrades to a literal match instead of failing.
  try {
    return new RegExp(pattern, "i");
  } catch {
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
  }
}

/**
 * The model's pattern runs in a worker within a time budget: `(.*a){20}`
 * over a long description backtracks for hours, and on the gateway's thread
 * that froze every run. A pattern that runs out of budget fails this call.
 */
async function withMatcher<T>(pattern: string, fn: (m: PatternMatcher) => Promise<T>): Promise<T> {
  const re = regexOf(pattern);
  const m = new PatternMatcher(re.source, "i", pattern);
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

/** The function schema of one tool. */
export function functionSchema(def: ToolDefinition): FunctionSchema {
  return { name: def.name, description: def.description, parameters: def.parameters };
}

/**
 * An immutable, searchable set of deferred tools. Its `hash` (over names and
 * schemas) scopes promotions in state: when the catalog changes (a server
 * added a tool, a schema drifted), promotions recorded for the old catalog
 * no longer apply.
 */
export class DeferredToolCatalog {
  readonly tools: readonly ToolDefinition[];
  readonly names: ReadonlySet<string>;
  readonly hash: string;

  constructor(tools: readonly ToolDefinition[]) {
    this.tools = [...tools];
    this.names = new Set(tools.map((t) => t.name));
    const canon = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(functionSchema);
    this.hash = createHash("sha256").update(JSON.stringify(canon)).digest("hex").slice(0, 16);
  }

  /**
   * Query forms: `select:a,b` (exact names, uncapped), `+term rest` (names
   * containing `term`, ranked by `rest`), otherwise a case-insensitive
   * pattern over name and description (name hits first). At most
   * {@link TOOL_SEARCH_MAX_RESULTS} results for ranked forms.
   */
  async search(query: string): Promise<ToolDefinition[]> {
    const q = query.trim();
    if (!q) return [];
    if (q.startsWith("select:")) {
      const wanted = new Set(q.slice(7).split(",").map((n) => n.trim()).filter(Boolean));
      return this.tools.filter((t) => wanted.has(t.name));
    }
    if (q.startsWith("+")) {
      const [required, ...rest] = q.slice(1).trim().split(/\s+/);
      if (!required) return [];
      const need = required.toLowerCase();
      const candidates = this.tools.filter((t) => t.name.toLowerCase().includes(need));
      const restQuery = rest.join(" ");
      if (restQuery) {
        const counts = await withMatcher(restQuery, (m) => m.count(candidates.map((t) => `${t.name} ${t.description}`)));
        const score = new Map(candidates.map((t, i) => [t, counts[i] ?? 0]));
        candidates.sort((a, b) => (score.get(b) ?? 0) - (score.get(a) ?? 0));
      }
      return candidates.slice(0, TOOL_SEARCH_MAX_RESULTS);
    }
    const [inText, inName] = await withMatcher(q, async (m) => [
      new Set(await m.match(this.tools.map((t) => `${t.name} ${t.description}`))),
      new Set(await m.match(this.tools.map((t) => t.name))),
    ]);
    const scored: Array<[number, ToolDefinition]> = [];
    this.tools.forEach((t, i) => {
      if (inText.has(i)) scored.push([inName.has(i) ? 2 : 1, t]);
    });
    // Array.prototype.sort is stable: equal scores keep catalog order.
    scored.sort((a, b) => b[0] - a[0]);
    return scored.slice(0, TOOL_SEARCH_MAX_RESULTS).map(([, t]) => t);
  }
}

const schema = z.object({
  query: z.string().describe('"select:name_a,name_b" for exact tools, keywords to search, or "+required rest" to require a term in the name.'),
});

/**
 * `tool_search(query)`: returns the full function schemas of matching
 * deferred tools as JSON and promotes them (`promoted{catalog_hash,names}`
 * in state), so following model calls see them and may call them.
 */
export function createToolSearchTool(catalog: DeferredToolCatalog): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: TOOL_SEARCH_TOOL_NAME,
    description:
      "Fetches full schema definitions for deferred tools so they can be called. Deferred tools are listed by name in " +
      "<available-deferred-tools>; until fetched only the name is known. Query forms: \"select:Read,Edit\" fetches these exact " +
      `tools; "notebook jupyter" searches keywords (up to ${TOOL_SEARCH_MAX_RESULTS} best matches); "+slack send" requires ` +
      '"slack" in the name and ranks by the remaining terms. A returned tool becomes callable.',
    schema,
    metadata: { group: "builtin" },
    execute: async (args, runtime) => {
      const matched = await catalog.search(args.query);
      const content = matched.length ? JSON.stringify(matched.map(functionSchema), null, 2) : `No tools found matching: ${args.query}`;
      return new Command({
        update: {
          promoted: { catalog_hash: catalog.hash, names: matched.map((t) => t.name) },
          messages: [toolMessage(content, { tool_call_id: runtime.toolCallId, name: TOOL_SEARCH_TOOL_NAME })],
        },
      });
    },
  });
}

/** The outcome of {@link assembleDeferredTools}: nothing deferred ⟺ `toolSearch` undefined ⟺ `deferredNames` empty. */
export interface DeferredToolSetup {
  /** The agent's tools: the candidates plus `tool_search` when something is deferred. */
  tools: ToolDefinition[];
  deferredNames: string[];
  catalogHash: string | null;
  catalog: DeferredToolCatalog | null;
  toolSearch?: ToolDefinition;
}

/**
 * With `tool_search.enabled`, defer every MCP tool of `candidates`: they stay
 * executable, but their schemas reach the model only after `tool_search`
 * promoted them (the DeferredToolFilter middleware enforces it). Disabled,
 * or with no MCP tool, nothing changes.
 */
export function assembleDeferredTools(candidates: readonly ToolDefinition[], options: { enabled: boolean }): DeferredToolSetup {
  const deferred = options.enabled ? candidates.filter(isMcpTool) : [];
  if (!deferred.length) return { tools: [...candidates], deferredNames: [], catalogHash: null, catalog: null };
  const catalog = new DeferredToolCatalog(deferred);
  const toolSearch = createToolSearchTool(catalog);
  return {
    tools: [...candidates.filter((t) => t.name !== TOOL_SEARCH_TOOL_NAME), toolSearch],
    deferredNames: deferred.map((t) => t.name).sort(),
    catalogHash: catalog.hash,
    catalog,
    toolSearch,
  };
}

/** The `prefer` routing hints of the deferred tools, for the McpRouting middleware (empty when none). */
export function deferredRoutingIndex(setup: DeferredToolSetup): Record<string, { priority: number; keywords: string[] }> {
  const out: Record<string, { priority: number; keywords: string[] }> = {};
  for (const t of setup.catalog?.tools ?? []) {
    const r = (t.metadata as { routing?: { mode: string; priority: number; keywords: string[] } } | undefined)?.routing;
    const keywords = (r?.keywords ?? []).map((k) => k.trim()).filter(Boolean);
    if (r?.mode === "prefer" && keywords.length) out[t.name] = { priority: r.priority, keywords };
  }
  return out;
}

/** Routing hints of every MCP tool among `tools` that prefers itself for some keywords (deferred ones marked). */
export function routingHintsOf(tools: readonly ToolDefinition[], deferredNames: readonly string[]): McpRoutingHint[] {
  const deferred = new Set(deferredNames);
  const out: McpRoutingHint[] = [];
  for (const t of tools) {
    const r = (t.metadata as { routing?: { mode: string; priority: number; keywords: string[] } } | undefined)?.routing;
    if (isMcpTool(t) && r?.mode === "prefer" && r.keywords.length) out.push({ tool: t.name, priority: r.priority, keywords: r.keywords, deferred: deferred.has(t.name) });
  }
  return out;
}
