/**
 * `memory.mode: tool`: instead of learning passively after each run, the
 * model manages memory itself with `memory_search`, `memory_add`,
 * `memory_update` and `memory_delete`. Results are JSON text; failures are
 * error tool messages, never thrown into the run.
 */
import { z } from "zod";
import type { Message } from "../messages";
import { tool } from "../tools";
import type { ToolDefinition, ToolRuntime } from "../tools";
import { instructionProblem } from "./directives";
import { feedEvidence, filterMessagesForMemory } from "./message-filter";
import { ProvenanceJudge } from "./provenance";
import type { FactProvenance } from "./provenance";
import type { MemoryService } from "./service";
import type { MemoryScope } from "./types";

function scopeOf(rt: ToolRuntime): MemoryScope {
  const { userId, agentName } = rt.context.identity;
  return { userId, agentName };
}

/**
 * Who a fact the model writes rests on: the model writing it is the one a
 * fetched page or an uploaded document may be talking to, so the run's tool
 * output decides as it does for the updater (see `provenance.ts`), and such a
 * fact may not instruct. Throws with the reason when it would.
 */
function judgeWrite(rt: ToolRuntime, content: string): FactProvenance {
  const messages = ((rt.state as { messages?: readonly Message[] }).messages ?? []) as readonly Message[];
  const judge = new ProvenanceJudge(feedEvidence(filterMessagesForMemory(messages)));
  const provenance = judge.decide(content, null);
  const problem = provenance === "user" ? null : instructionProblem(content, judge.userText);
  if (problem) throw new Error(`Not remembered: this run read tool output or uploads, and the fact ${problem}; facts taken from them may not instruct the assistant.`);
  return provenance;
}

const fail = (err: unknown) => ({ content: JSON.stringify({ error: err instanceof Error ? err.message : String(err) }), status: "error" as const });

/** The four memory tools bound to a service. */
export function createMemoryTools(service: MemoryService): ToolDefinition[] {
  const search = tool({
    name: "memory_search",
    description: "Search what you remember about the user (preferences, corrections, background) by a natural-language query. Returns JSON {results, count}; each result has id, content, category, confidence, createdAt and source.",
    schema: z.object({
      query: z.string().describe("What to look for."),
      category: z.string().nullish().describe('Only facts of this category, e.g. "preference" or "correction".'),
      limit: z.number().int().min(1).max(100).default(10).describe("Maximum results (default 10)."),
    }),
    execute: async (args, rt) => {
      try {
        const results = await service.search(scopeOf(rt), args.query, { limit: args.limit, category: args.category });
        return JSON.stringify({ results, count: results.length });
      } catch (err) {
        return fail(err);
      }
    },
  });
  const add = tool({
    name: "memory_add",
    description: "Remember a new fact about the user for future conversations (a preference, a correction, background, work context). Be specific. Returns JSON {fact_id, status: \"added\"}.",
    schema: z.object({
      content: z.string().describe("The fact to remember."),
      category: z.string().default("context").describe('Category, e.g. "preference", "correction", "behavior", "context".'),
      confidence: z.number().min(0).max(1).default(0.7).describe("How sure you are, 0-1: higher for explicit statements."),
    }),
    execute: async (args, rt) => {
      try {
        const { factId } = await service.createFact(scopeOf(rt), { ...args, provenance: judgeWrite(rt, args.content) });
        return JSON.stringify({ fact_id: factId, status: "added" });
      } catch (err) {
        return fail(err);
      }
    },
  });
  const update = tool({
    name: "memory_update",
    description: "Change a remembered fact (find its id with memory_search first). Omitted fields stay as they are. Returns JSON {fact_id, status: \"updated\"}.",
    schema: z.object({
      fact_id: z.string().describe("The fact's id."),
      content: z.string().nullish().describe("New text."),
      category: z.string().nullish().describe("New category."),
      confidence: z.number().min(0).max(1).nullish().describe("New confidence 0-1."),
    }),
    execute: async (args, rt) => {
      try {
        const provenance = args.content ? judgeWrite(rt, args.content) : undefined;
        await service.updateFact(scopeOf(rt), args.fact_id, { content: args.content ?? undefined, category: args.category ?? undefined, confidence: args.confidence ?? undefined, provenance });
        return JSON.stringify({ fact_id: args.fact_id, status: "updated" });
      } catch (err) {
        return fail(err);
      }
    },
  });
  const del = tool({
    name: "memory_delete",
    description: "Forget a remembered fact by id (find it with memory_search first). Returns JSON {fact_id, status: \"deleted\"}.",
    schema: z.object({ fact_id: z.string().describe("The fact's id.") }),
    execute: async (args, rt) => {
      try {
        await service.deleteFact(scopeOf(rt), args.fact_id);
        return JSON.stringify({ fact_id: args.fact_id, status: "deleted" });
      } catch (err) {
        return fail(err);
      }
    },
  });
  return [search, add, update, del];
}
