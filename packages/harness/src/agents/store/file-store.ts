import {
  createCustomAgent,
  customAgentExists,
  customAgentSignature,
  deleteCustomAgent,
  isLegacyOnlyAgent,
  listCustomAgents,
  loadCustomAgent,
  updateCustomAgent,
} from "../custom-agent";
import type { AgentDeleteOutcome, CustomAgentConfig, CustomAgentDocument } from "../custom-agent";
import type { AgentStore } from "./types";

/**
 * `agent_storage.backend: file` (the default): `{base}/users/{uid}/agents/{name}/config.yaml`
 * + `SOUL.md`, with the legacy shared `{base}/agents/{name}` read as a fallback.
 * Stateless: one per base directory is as good as another.
 */
export class FileAgentStore implements AgentStore {
  readonly kind = "file" as const;

  constructor(readonly baseDir: string) {}

  async get(userId: string, name: string): Promise<CustomAgentConfig> {
    return loadCustomAgent(this.baseDir, userId, name);
  }

  async exists(userId: string, name: string): Promise<boolean> {
    return customAgentExists(this.baseDir, userId, name);
  }

  async list(userId: string, warn?: (message: string) => void): Promise<CustomAgentConfig[]> {
    return listCustomAgents(this.baseDir, userId, warn);
  }

  async create(userId: string, config: CustomAgentDocument, soul: string): Promise<CustomAgentConfig> {
    return createCustomAgent(this.baseDir, userId, config, soul);
  }

  async update(userId: string, name: string, config: CustomAgentDocument | null, soul: string | null): Promise<CustomAgentConfig> {
    return updateCustomAgent(this.baseDir, userId, name, config, soul);
  }

  async delete(userId: string, name: string): Promise<AgentDeleteOutcome> {
    return deleteCustomAgent(this.baseDir, userId, name);
  }

  async isLegacyOnly(userId: string, name: string): Promise<boolean> {
    return isLegacyOnlyAgent(this.baseDir, userId, name);
  }

  signature(userId: string, name: string): string {
    return customAgentSignature(this.baseDir, userId, name);
  }

  async close(): Promise<void> {}
}
