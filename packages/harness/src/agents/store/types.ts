import type { AgentDeleteOutcome, CustomAgentConfig, CustomAgentDocument } from "../custom-agent";

/** Where custom agent definitions live: `agent_storage.backend` `file`, or `db` on SQLite / PostgreSQL. */
export type AgentStoreKind = "file" | "sqlite" | "postgres";

/**
 * Custom agent definitions (config document + soul) per user. Every reader
 * and writer goes through one of these: the lead agent factory, the
 * `setup_agent` / `update_agent` tools, the gateway's `/api/agents` routes and
 * `deerflow agents import`. Names are checked and lower-cased by the store
 * (`agent_name_invalid`); errors are `ValidationError`s with the codes the
 * callers map: `agent_not_found`, `agent_exists`.
 */
export interface AgentStore {
  readonly kind: AgentStoreKind;
  /** The agent, or `agent_not_found`. */
  get(userId: string, name: string): Promise<CustomAgentConfig>;
  /** True when the name is taken for this user (the same rule {@link create} refuses on). */
  exists(userId: string, name: string): Promise<boolean>;
  /** Every agent of the user, sorted by name; an unreadable one is skipped and reported through `warn`. */
  list(userId: string, warn?: (message: string) => void): Promise<CustomAgentConfig[]>;
  /**
   * Create a new agent; `agent_exists` when the name is taken. Of two
   * concurrent creates of one name (also from two processes) exactly one wins.
   */
  create(userId: string, config: CustomAgentDocument, soul: string): Promise<CustomAgentConfig>;
  /** Upsert: `config` (when not null) replaces the document, `soul` (when not null) the soul. */
  update(userId: string, name: string, config: CustomAgentDocument | null, soul: string | null): Promise<CustomAgentConfig>;
  /** Remove the agent (and its memory directory); see {@link AgentDeleteOutcome}. */
  delete(userId: string, name: string): Promise<AgentDeleteOutcome>;
  /** True when the agent exists only in the legacy shared file layout (writes there are refused); always false for `db`. */
  isLegacyOnly(userId: string, name: string): Promise<boolean>;
  /**
   * A change token of one agent: equal tokens mean "unchanged since the last
   * read". The runtime keys its agent cache on it, so an edit made by any
   * process shows on the next run. Synchronous where the backend can answer
   * without I/O on another thread (files, SQLite), so the file path stays as fast as before.
   */
  signature(userId: string, name: string): string | Promise<string>;
  /** Release what the store opened (not a shared pool). */
  close(): Promise<void>;
}
