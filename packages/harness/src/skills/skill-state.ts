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

/** Per-user state file of non-public skills. */
export function userSkillStatesFile(dataDir: string, userId: string): string {
  return path.join(dataDir, "users", userId, "skills", "_skill_states.json");
}

/**
 * Enabled states of skills. Public skills follow
 * `extensions_config.json → skills.<name>.enabled` (default true, shared by
 * every user); custom and legacy skills follow the user's own state file,
 * intersected with the global entry so an operator can switch a name off
 * everywhere.
 */
export class SkillStateStore {
  constructor(
    private readonly options: {
      dataDir: string;
      /** The extensions file to read and write (re-read on every call so edits apply at once). */
      extensionsPath: () => string | null;
      /** Fallback when no file exists (the loaded config's `extensions`). */
      extensions?: () => ExtensionsConfig | undefined;
      /** Where to create `extensions_config.json` when none exists yet. */
      defaultExtensionsPath: string;
    },
  ) {}

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
    return statesOf(await readJsonObject(userSkillStatesFile(this.options.dataDir, userId)).catch(() => null));
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
    const file = userSkillStatesFile(this.options.dataDir, userId);
    await mutex.run(file, async () => {
      const states = await this.userStates(userId);
      states[name] = { enabled };
      await writeFileAtomic(file, `${JSON.stringify(states, null, 2)}\n`);
    });
  }

  /** Forget a user's state of a deleted skill. */
  async dropUser(userId: string, name: string): Promise<void> {
    const file = userSkillStatesFile(this.options.dataDir, userId);
    await mutex.run(file, async () => {
      const states = await this.userStates(userId);
      if (!(name in states)) return;
      delete states[name];
      await writeFileAtomic(file, `${JSON.stringify(states, null, 2)}\n`);
    });
  }
}
