import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { MemoryService } from "../../src/memory";
import type { MemoryServiceOptions } from "../../src/memory";
import { PgMemoryIndex } from "../../src/memory/index-pg";
import { openPgPool } from "../../src/postgres";
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

/**
 * With DEERFLOW_TEST_MEMORY_INDEX=postgres (and a test server), every
 * scripted service keeps its index in a PostgreSQL schema of its own, so the
 * whole memory suite runs against the PostgreSQL index; the schema is dropped
 * on dispose.
 */
function testIndex(): { index?: PgMemoryIndex; drop: () => Promise<void> } {
  const url = process.env.DEERFLOW_TEST_POSTGRES_URL;
  if (process.env.DEERFLOW_TEST_MEMORY_INDEX !== "postgres") return { drop: async () => undefined };
  if (!url) throw new Error("DEERFLOW_TEST_MEMORY_INDEX=postgres needs the test PostgreSQL (DEERFLOW_TEST_POSTGRES_URL)");
  const schema = `mem_${randomBytes(5).toString("hex")}`;
  const index = new PgMemoryIndex({ pool: () => openPgPool({ url, schema, max: 2, log: () => undefined }), ownsPool: true });
  return {
    index,
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A service over a temp dir whose updater is a ScriptedModel. */
export function scriptedService(steps: ScriptStep[], options: Partial<MemoryServiceOptions> & { memory?: Record<string, unknown> } = {}) {
  const t = tempDir();
  const pgIndex = options.index ? { drop: async () => undefined } : testIndex();
  const model = new ScriptedModel(steps);
  const warnings: string[] = [];
  const service = new MemoryService({
    config: options.memory ?? { backend_config: { debounce_seconds: 0.01 } },
    dataDir: t.dir,
    resolveModel: () => model,
    logger: { warn: (m) => void warnings.push(m) },
    ...(pgIndex.index ? { index: pgIndex.index } : {}),
    ...options,
  });
  return {
    service,
    model,
    warnings,
    dir: t.dir,
    async dispose() {
      await service.close();
      await pgIndex.drop();
      t.cleanup();
    },
  };
}
