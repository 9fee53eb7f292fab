import { InvalidUpdateError } from "../errors";
import { baseStateSchema, lastValue } from "./channels";
import type { AgentState, Channel, StateSchema } from "./channels";

/** `state.sandbox`. */
export interface SandboxState {
  sandbox_id: string;
}

/** `state.thread_data`: host paths of the thread's three directories. */
export interface ThreadDataState {
  workspace_path: string;
  uploads_path: string;
  outputs_path: string;
}

/** One todo item of plan mode. */
export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** One viewed image (no base64 is stored). */
export interface ViewedImage {
  mime_type: string;
  size: number;
  actual_path?: string;
}

/** Deferred-tool promotions, scoped by catalog hash. */
export interface PromotedState {
  catalog_hash: string;
  names: string[];
}

/** Terminal delegation statuses, never overwritten by a non-terminal one. */
export const TERMINAL_DELEGATION_STATUSES = new Set([
  "completed",
  "failed",
  "cancelled",
  "timed_out",
  "polling_timed_out",
]);

/** One entry of the sub-agent delegation ledger. */
export interface DelegationEntry {
  id: string;
  run_id?: string | null;
  description: string;
  subagent_type: string;
  status: string;
  result_brief?: string | null;
  result_sha256?: string | null;
  result_ref?: string | null;
  stop_reason?: string | null;
  created_at: string;
}

/** A skill whose SKILL.md was loaded in this thread. */
export interface SkillContextEntry {
  name: string;
  path: string;
  description: string;
  loaded_at: string;
}

/** `merge_sandbox`: idempotent; a different id is a conflict. */
export function mergeSandbox(current: SandboxState | null | undefined, update: SandboxState | null): SandboxState | null {
  if (update == null) return current ?? null;
  if (current && current.sandbox_id && update.sandbox_id && current.sandbox_id !== update.sandbox_id) {
    throw new InvalidUpdateError("Conflicting sandbox state updates", {
      details: { current: current.sandbox_id, update: update.sandbox_id },
    });
  }
  return update;
}

/** `merge_artifacts`: concatenate and dedupe, keeping first-seen order. */
export function mergeArtifacts(current: string[] | null | undefined, update: string[] | null): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of [...(current ?? []), ...(update ?? [])]) {
    if (!seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  }
  return out;
}

/** `merge_todos`: `null` keeps the old list; any list (even empty) replaces it. */
export function mergeTodos(current: Todo[] | null | undefined, update: Todo[] | null): Todo[] | null {
  return update == null ? (current ?? null) : update;
}

/** `None` keeps, anything else replaces (used by `goal`). */
export function keepIfNull<T>(current: T | null | undefined, update: T | null): T | null {
  return update == null ? (current ?? null) : update;
}

/** `merge_viewed_images`: dict merge; an empty dict clears. */
export function mergeViewedImages(
  current: Record<string, ViewedImage> | null | undefined,
  update: Record<string, ViewedImage> | null,
): Record<string, ViewedImage> {
  if (update == null) return current ?? {};
  if (Object.keys(update).length === 0) return {};
  return { ...(current ?? {}), ...update };
}

/** `merge_promoted`: empty keeps; a different hash replaces; same hash → ordered union. */
export function mergePromoted(current: PromotedState | null | undefined, update: PromotedState | null): PromotedState | null {
  if (update == null || (!update.catalog_hash && (!update.names || update.names.length === 0))) return current ?? null;
  if (!current || current.catalog_hash !== update.catalog_hash) return { catalog_hash: update.catalog_hash, names: [...update.names] };
  const names = [...current.names];
  for (const n of update.names) if (!names.includes(n)) names.push(n);
  return { catalog_hash: current.catalog_hash, names };
}

/** Max ledger entries kept. */
export const MAX_DELEGATIONS = 50;

/**
 * `merge_delegations`: append; same id → latest wins but keeps the first
 * `created_at` and `run_id`; a terminal status is never downgraded; last 50 kept.
 */
export function mergeDelegations(current: DelegationEntry[] | null | undefined, update: DelegationEntry[] | null): DelegationEntry[] {
  const out = [...(current ?? [])];
  for (const entry of update ?? []) {
    const at = out.findIndex((e) => e.id === entry.id);
    if (at < 0) {
      out.push(entry);
      continue;
    }
    const prev = out[at];
    const prevTerminal = TERMINAL_DELEGATION_STATUSES.has(prev.status);
    const nextTerminal = TERMINAL_DELEGATION_STATUSES.has(entry.status);
    const merged: DelegationEntry = {
      ...prev,
      ...entry,
      created_at: prev.created_at,
      run_id: prev.run_id ?? entry.run_id,
    };
    if (prevTerminal && !nextTerminal) merged.status = prev.status;
    out[at] = merged;
  }
  return out.length > MAX_DELEGATIONS ? out.slice(out.length - MAX_DELEGATIONS) : out;
}

/** Max skill-context entries kept. */
export const MAX_SKILL_CONTEXT = 8;

/** `merge_skill_context`: dedupe by path (refreshing recency), keep the last 8, collapse descriptions. */
export function mergeSkillContext(current: SkillContextEntry[] | null | undefined, update: SkillContextEntry[] | null): SkillContextEntry[] {
  let out = [...(current ?? [])];
  for (const entry of update ?? []) {
    out = out.filter((e) => e.path !== entry.path);
    const description = entry.description.replace(/\s+/g, " ").trim().slice(0, 500);
    out.push({ ...entry, description });
  }
  return out.length > MAX_SKILL_CONTEXT ? out.slice(out.length - MAX_SKILL_CONTEXT) : out;
}

function ch<V, U = V>(reducer: (c: V, u: U) => V, def?: () => V): Channel<V, U> {
  return def ? { reducer, default: def } : { reducer };
}

/**
 * DeerFlow's `ThreadState` channels (on top of `messages`), with the reducers
 * of `agents/thread_state.py`.
 */
export const threadStateSchema: StateSchema = {
  ...baseStateSchema,
  sandbox: ch(mergeSandbox as never),
  thread_data: lastValue<ThreadDataState | null>(),
  title: lastValue<string | null>(),
  artifacts: ch(mergeArtifacts as never, () => []),
  todos: ch(mergeTodos as never),
  goal: ch(keepIfNull as never),
  uploaded_files: lastValue<unknown[] | null>(),
  viewed_images: ch(mergeViewedImages as never, () => ({})),
  promoted: ch(mergePromoted as never),
  delegations: ch(mergeDelegations as never, () => []),
  skill_context: ch(mergeSkillContext as never, () => []),
  summary_text: lastValue<string | null>(),
  background_tasks: lastValue<unknown[] | null>(),
};

/** DeerFlow's ThreadState as a TypeScript type. */
export interface ThreadState extends AgentState {
  sandbox?: SandboxState | null;
  thread_data?: ThreadDataState | null;
  title?: string | null;
  artifacts: string[];
  todos?: Todo[] | null;
  goal?: unknown;
  uploaded_files?: unknown[] | null;
  viewed_images: Record<string, ViewedImage>;
  promoted?: PromotedState | null;
  delegations: DelegationEntry[];
  skill_context: SkillContextEntry[];
  summary_text?: string | null;
  background_tasks?: unknown[] | null;
}
