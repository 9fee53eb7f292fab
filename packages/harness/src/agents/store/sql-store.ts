import { existsSync, rmSync } from "node:fs";
import { userAgentDir } from "../custom-agent";
import type { AgentDeleteOutcome, CustomAgentConfig, CustomAgentDocument } from "../custom-agent";
import { agentExists, agentFromRow, agentNotFound, documentText, newRev, rowName } from "./rows";
import type { AgentRow } from "./rows";
import type { AgentStore, AgentStoreKind } from "./types";

/** The row operations a database gives {@link SqlAgentStore}: one statement each. */
export interface AgentRowDb {
  readonly kind: Exclude<AgentStoreKind, "file">;
  row(userId: string, name: string): Promise<AgentRow | undefined>;
  rows(userId: string): Promise<AgentRow[]>;
  /** Insert a new row; false when `(user_id, name)` is taken (the unique key decides, not a prior read). */
  insert(userId: string, row: AgentRow): Promise<boolean>;
  /** Insert, or replace the given parts (`null` = keep) of the existing row, in one statement. */
  upsert(userId: string, name: string, config: string | null, soul: string | null, rev: string): Promise<void>;
  /** Delete the row; true when there was one. */
  remove(userId: string, name: string): Promise<boolean>;
  /** The row's change token ("" when missing). */
  rev(userId: string, name: string): string | Promise<string>;
  close(): Promise<void>;
}

/**
 * `agent_storage.backend: db`: one row per (user, agent) in the process's
 * database, so every process on it sees the same agents. The agent's memory
 * still lives in `{base}/users/{uid}/agents/{name}/` (memory is not part of
 * the definition); deleting the agent removes that directory, as the file
 * backend does.
 */
export class SqlAgentStore implements AgentStore {
  readonly kind: Exclude<AgentStoreKind, "file">;

  constructor(
    private readonly db: AgentRowDb,
    private readonly baseDir: string,
  ) {
    this.kind = db.kind;
  }

  async get(userId: string, name: string): Promise<CustomAgentConfig> {
    const lower = rowName(name);
    const row = await this.db.row(userId, lower);
    if (!row) throw agentNotFound(lower);
    return agentFromRow(row);
  }

  async exists(userId: string, name: string): Promise<boolean> {
    return (await this.db.row(userId, rowName(name))) !== undefined;
  }

  async list(userId: string, warn?: (message: string) => void): Promise<CustomAgentConfig[]> {
    const out: CustomAgentConfig[] = [];
    for (const row of await this.db.rows(userId)) {
      try {
        out.push(agentFromRow(row));
      } catch (err) {
        warn?.(`Skipping agent '${row.name}': ${(err as Error).message}`);
      }
    }
    // the file backend's order, whatever the database's collation
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async create(userId: string, config: CustomAgentDocument, soul: string): Promise<CustomAgentConfig> {
    const name = rowName(config.name);
    const row: AgentRow = { name, config: documentText({ ...config, name }), soul, rev: newRev() };
    if (!(await this.db.insert(userId, row))) throw agentExists(name);
    return agentFromRow(row);
  }

  async update(userId: string, name: string, config: CustomAgentDocument | null, soul: string | null): Promise<CustomAgentConfig> {
    const lower = rowName(name);
    await this.db.upsert(userId, lower, config ? documentText({ ...config, name: lower }) : null, soul, newRev());
    return this.get(userId, lower);
  }

  async delete(userId: string, name: string): Promise<AgentDeleteOutcome> {
    const lower = rowName(name);
    const dir = userAgentDir(this.baseDir, userId, lower);
    if (await this.db.remove(userId, lower)) {
      rmSync(dir, { recursive: true, force: true });
      return "deleted";
    }
    // Without a row, a directory holds only the agent's memory (or files never imported): kept.
    return existsSync(dir) ? "not-custom-agent" : "missing";
  }

  async isLegacyOnly(): Promise<boolean> {
    return false;
  }

  signature(userId: string, name: string): string | Promise<string> {
    let lower: string;
    try {
      lower = rowName(name);
    } catch {
      return "";
    }
    return this.db.rev(userId, lower);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
