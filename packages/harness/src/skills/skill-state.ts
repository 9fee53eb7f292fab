import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ExtensionsConfig } from "../config";
import { writeFileAtomic } from "../fs";
import { KeyedMutex } from "./keyed-mutex";

/** `{name: {enabled}}` as stored in `extensions_config.json → skills` and per-user `_skill_states.json`. */
export type SkillStates = Record<string, { enabled: boolean }>;

const mutex = new KeyedMutex();

async function readJsonObject(file: string): Promise<Record<string, unknown> | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const value = JSON.parse(text) as unknown;
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function statesOf(raw: unknown): SkillStates {
  const out: SkillStates = {};
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return out;
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v && typeof v === "object" && typeof (v as { enabled?: unknown }).enabled === "boolean") out[name] = { enabled: (v as { enabled: boolean }).enabled };
  }
  return out;
}

/**
 * Where each user's states of their non-public skills live: the per-user
 * `_skill_states.json` by default, a PostgreSQL table on
 * `database.backend: postgres` (see skill-state-pg.ts). Each call is one
 * change, so a backend can make it one statement.
 */
export interface UserSkillStateStore {
  get(userId: string): Promise<SkillStates>;
  set(userId: string, name: string, enabled: boolean): Promise<void>;
  /** Forget the state of a deleted skill. */
  drop(userId: string, name: string): Promise<void>;
}

/** Per-user state file of non-public skills. */
export function userSkillStatesFile(dataDir: string, userId: string): string {
  return path.join(dataDir, "users", userId, "skills", "_skill_states.json");
}

/**
 * Users' states in `{dataDir}/users/{uid}/skills/_skill_states.json`, each
 * change a read-modify-write under a per-file lock. The lock is this
 * process's: two processes toggling one user's skills at once can lose one
 * change, which is why shared deployments keep these rows in PostgreSQL.
 */
export class FileUserSkillStates implements UserSkillStateStore {
  constructor(private readonly dataDir: string) {}

  async get(userId: string): Promise<SkillStates> {
    return statesOf(await readJsonObject(userSkillStatesFile(this.dataDir, userId)).catch(() => null));
  }

  async set(userId: string, name: string, enabled: boolean): Promise<void> {
    const file = userSkillStatesFile(this.dataDir, userId);
    await mutex.run(file, async () => {
      const states = await this.get(userId);
      states[name] = { enabled };
      await writeFileAtomic(file, `${JSON.stringify(states, null, 2)}\n`);
    });
  }

  async drop(userId: string, name: string): Promise<void> {
    const file = userSkillStatesFile(this.dataDir, userId);
    await mutex.run(file, async () => {
      const states = await this.get(userId);
      if (!(name in states)) return;
      delete states[name];
      await writeFileAtomic(file, `${JSON.stringify(states, null, 2)}\n`);
    });
  }
}

/**
 * Enabled states of skills. Public skills follow
 * `extensions_config.json → skills.<name>.enabled` (default true, shared by
 * every user); custom and legacy skills follow the user's own state file,
 * intersected with the global entry so an operator can switch a name off
 * everywhere. Public states stay in the extensions file on every backend:
 * it is the operator's file (beside the MCP servers), edited by hand and
 * hot-reloaded like config.yaml, and changes rarely, by an admin; moving it
 * into a database would split one document the operator owns in two.
 */
export class SkillStateStore {
  private readonly users: UserSkillStateStore;

  constructor(
    private readonly options: {
      dataDir: string;
      /** The extensions file to read and write (re-read on every call so edits apply at once). */
      extensionsPath: () => string | null;
      /** Fallback when no file exists (the loaded config's `extensions`). */
      extensions?: () => ExtensionsConfig | undefined;
      /** Where to create `extensions_config.json` when none exists yet. */
      defaultExtensionsPath: string;
      /** Where users' own states live (default: their `_skill_states.json` files). */
      users?: UserSkillStateStore;
    },
  ) {
    this.users = options.users ?? new FileUserSkillStates(options.dataDir);
  }

  /** Global states from the extensions file (or the in-memory config when there is no file). */
  async publicStates(): Promise<SkillStates> {
    // Without a configured file, a file created by an earlier toggle is the source.
    const file = this.options.extensionsPath() ?? this.options.defaultExtensionsPath;
    if (file) {
      const doc = await readJsonObject(file).catch(() => null);
      if (doc) return statesOf(doc.skills);
    }
    return statesOf(this.options.extensions?.()?.skills);
  }

  /** The user's own states of non-public skills. */
  async userStates(userId: string): Promise<SkillStates> {
    return this.users.get(userId);
  }

  /** Set a public skill's global state (read-modify-write of the extensions file, other keys kept). */
  async setPublic(name: string, enabled: boolean): Promise<string> {
    const file = this.options.extensionsPath() ?? this.options.defaultExtensionsPath;
    await mutex.run(file, async () => {
      const doc = (await readJsonObject(file)) ?? { mcpServers: {}, skills: {} };
      const skills = doc.skills && typeof doc.skills === "object" && !Array.isArray(doc.skills) ? (doc.skills as Record<string, unknown>) : {};
      skills[name] = { enabled };
      doc.skills = skills;
      // 0o600 like the MCP writer: the same file holds MCP servers' credentials.
      await writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
    });
    return file;
  }

  /** Set a non-public skill's state for one user. */
  async setUser(userId: string, name: string, enabled: boolean): Promise<void> {
    await this.users.set(userId, name, enabled);
  }

  /** Forget a user's state of a deleted skill. */
  async dropUser(userId: string, name: string): Promise<void> {
    await this.users.drop(userId, name);
  }
}
