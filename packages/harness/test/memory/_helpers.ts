import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryService } from "../../src/memory";
import type { MemoryServiceOptions } from "../../src/memory";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";

/** A temp dir removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "deerflow-memory-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An updater answer as the model would give it. */
export function updaterJson(partial: Record<string, unknown> = {}): string {
  return JSON.stringify({ user: {}, history: {}, newFacts: [], factsToRemove: [], ...partial });
}

/** A user-scoped, durable, descriptive fact proposal. */
export function proposedFact(content: string, extra: Record<string, unknown> = {}) {
  return { content, category: "preference", confidence: 0.9, scope: "user", durability: "durable", authority: "descriptive", ...extra };
}

/** A service over a temp dir whose updater is a ScriptedModel. */
export function scriptedService(steps: ScriptStep[], options: Partial<MemoryServiceOptions> & { memory?: Record<string, unknown> } = {}) {
  const t = tempDir();
  const model = new ScriptedModel(steps);
  const warnings: string[] = [];
  const service = new MemoryService({
    config: options.memory ?? { backend_config: { debounce_seconds: 0.01 } },
    dataDir: t.dir,
    resolveModel: () => model,
    logger: { warn: (m) => void warnings.push(m) },
    ...options,
  });
  return {
    service,
    model,
    warnings,
    dir: t.dir,
    async dispose() {
      await service.close();
      t.cleanup();
    },
  };
}
