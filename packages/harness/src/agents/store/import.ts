import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { hasErrorCode } from "../../errors";
import { AGENT_NAME_PATTERN, loadCustomAgent, userAgentsDir } from "../custom-agent";
import type { CustomAgentDocument } from "../custom-agent";
import type { AgentStore } from "./types";

/** What {@link importFileAgents} did, per agent. */
export interface AgentImportOutcome {
  /** Copied into the store. */
  imported: Array<{ userId: string; name: string }>;
  /** Already in the store (left as it is there: the store's copy may have been edited since). */
  existing: Array<{ userId: string; name: string }>;
  /** Unreadable files, or shared legacy agents (`{base}/agents/`, not owned by any user). */
  skipped: Array<{ userId: string | null; name: string; reason: string }>;
}

const subdirs = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((e) => statSync(join(dir, e)).isDirectory()).sort() : []);

/**
 * Copy every per-user file agent (`{base}/users/{uid}/agents/{name}/`) into
 * `store`, leaving the files in place. Idempotent: an agent already in the
 * store is not touched, so running it again (or on several processes at
 * once) imports nothing twice.
 */
export async function importFileAgents(baseDir: string, store: AgentStore): Promise<AgentImportOutcome> {
  const out: AgentImportOutcome = { imported: [], existing: [], skipped: [] };
  for (const userId of subdirs(join(baseDir, "users"))) {
    const root = userAgentsDir(baseDir, userId);
    for (const entry of subdirs(root)) {
      // a directory without config.yaml holds only the agent's memory
      if (!AGENT_NAME_PATTERN.test(entry) || !existsSync(join(root, entry, "config.yaml"))) continue;
      let agent;
      try {
        agent = loadCustomAgent(baseDir, userId, entry);
      } catch (err) {
        out.skipped.push({ userId, name: entry, reason: (err as Error).message });
        continue;
      }
      const { soul, ...doc } = agent;
      try {
        await store.create(userId, doc as CustomAgentDocument, soul ?? "");
        out.imported.push({ userId, name: agent.name });
      } catch (err) {
        if (!hasErrorCode(err, "agent_exists")) throw err;
        out.existing.push({ userId, name: agent.name });
      }
    }
  }
  for (const entry of subdirs(join(baseDir, "agents"))) {
    if (AGENT_NAME_PATTERN.test(entry) && existsSync(join(baseDir, "agents", entry, "config.yaml"))) {
      out.skipped.push({ userId: null, name: entry, reason: "shared legacy agent (not owned by a user): move it under users/<id>/agents first" });
    }
  }
  return out;
}
