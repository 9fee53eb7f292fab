import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../src/memory";
import { SqliteMemoryIndex } from "../../src/memory/index-db";
import { PgMemoryIndex } from "../../src/memory/index-pg";
import type { MemoryIndex } from "../../src/memory/index-types";
import type { MemoryFact } from "../../src/memory/types";
import { openPgPool } from "../../src/postgres";
import { freshPostgresDatabase } from "../../src/testing";
import type { FreshDatabase } from "../../src/testing";
import { tempDir } from "./_helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const log = () => undefined;

const fact = (id: string, content: string): MemoryFact => ({ id, content, category: "context", confidence: 0.8, createdAt: "2026-01-01T00:00:00Z", source: "t" });

/** 70 facts: 60 mention "project" (a common word past the 2% / 50 cap), a few name rare things. */
function corpus(): MemoryFact[] {
  const out: MemoryFact[] = [];
  for (let i = 0; i < 60; i++) out.push(fact(`fact_p${String(i).padStart(3, "0")}`, `Project number ${i} is tracked by the ${i % 3 ? "platform" : "manager"} team`));
  out.push(fact("fact_k1", "User's team migrated the billing service to Kafka"));
  out.push(fact("fact_k2", "Kafka clusters run in the Frankfurt region"));
  out.push(fact("fact_r1", "User prefers Rust for command line tools"));
  out.push(fact("fact_r2", "User is learning Rust and Go"));
  out.push(fact("fact_t1", "User drinks green tea every morning"));
  out.push(fact("fact_m1", "The project manager of Falcon is Alice"));
  out.push(fact("fact_m2", "Alice manages the Falcon project with Bob"));
  out.push(fact("fact_c1", "User's cat Mochi likes running around"));
  out.push(fact("fact_c2", "User runs marathons in spring"));
  out.push(fact("fact_x1", "Deployments happen on Fridays"));
  return out;
}

describe.skipIf(!SERVER)("memory index on PostgreSQL", () => {
  let fresh: FreshDatabase;
  const pools: pg.Pool[] = [];
  const pgIndex = async () => {
    const pool = await openPgPool({ url: fresh.url, max: 3, log });
    pools.push(pool);
    return new PgMemoryIndex({ pool });
  };
  let tmp: ReturnType<typeof tempDir>;
  let sqlite: SqliteMemoryIndex;
  let pgA: PgMemoryIndex;
  let pgB: PgMemoryIndex;
  const both = () => [sqlite, pgA] as MemoryIndex[];

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "memidx");
    tmp = tempDir();
    sqlite = new SqliteMemoryIndex(path.join(tmp.dir, "memory.db"));
    pgA = await pgIndex();
    pgB = await pgIndex(); // another process on the same database
  });
  afterAll(async () => {
    sqlite?.close();
    await pgA?.close();
    await pgB?.close();
    for (const p of pools) await p.end();
    tmp?.cleanup();
    await fresh?.drop();
  });

  it("indexes facts once per signature, incrementally, and ranks them as the SQLite index does", async () => {
    const facts = corpus();
    for (const ix of both()) {
      expect(await ix.syncFacts("u", "r1", facts)).toBe(true);
      expect(await ix.syncFacts("u", "r1", facts)).toBe(false);
    }
    expect(await pgB.syncFacts("u", "r1", facts)).toBe(false); // the other process sees it indexed
    const queries = ["Which language do I like for CLI tools, Rust?", "kafka", "Tell me about the Falcon project manager", "project", "project team", "green tea", "running", "nothing matches zebra"];
    for (const q of queries) {
      const [s, p] = await Promise.all(both().map(async (ix) => (await ix.searchFacts("u", q)).map((h) => h.id)));
      // the same facts are found, and the best ones lead in the same order
      expect(new Set(p), q).toEqual(new Set(s));
      expect(p.slice(0, 3), q).toEqual(s.slice(0, 3));
    }
    expect((await pgA.searchFacts("u", "running")).map((h) => h.id).sort()).toEqual(["fact_c1", "fact_c2", "fact_k2"]); // stemmed: run, runs, running
    // an update: one fact changed, one removed, one added
    const next = facts.filter((f) => f.id !== "fact_t1").map((f) => (f.id === "fact_x1" ? { ...f, content: "Deployments happen on Tuesdays" } : f));
    next.push(fact("fact_n1", "User switched to oolong tea"));
    for (const ix of both()) {
      expect(await ix.syncFacts("u", "r2", next)).toBe(true);
      expect((await ix.searchFacts("u", "tea")).map((h) => h.id)).toEqual(["fact_n1"]);
      expect((await ix.searchFacts("u", "fridays")).map((h) => h.id)).toEqual([]);
      expect((await ix.searchFacts("u", "tuesdays")).map((h) => h.id)).toEqual(["fact_x1"]);
    }
    expect(await pgA.searchFacts("other-user", "tea")).toEqual([]); // scopes never mix
  });

  it("thread summaries: replaced, searched, forgotten per user (agent scopes included, LIKE characters literal)", async () => {
    for (const ix of both()) {
      await ix.putThreadSummary("v", "trip", "Planned a rail trip through Japan with a stop in Kyoto", "2026-01-01T00:00:00Z");
      await ix.putThreadSummary("v", "leak", "Debugged a memory leak in a node worker", "2026-01-02T00:00:00Z");
      await ix.putThreadSummary("v/writer", "trip", "Wrote about trains in Japan", "2026-01-03T00:00:00Z");
      await ix.putThreadSummary("v_x", "trip", "Another user's trip to Japan", "2026-01-03T00:00:00Z");
      expect((await ix.searchThreadSummaries("v", "japan trains")).map((h) => h.id)).toEqual(["trip"]);
      expect((await ix.threadSummaries("v")).map((s) => s.threadId)).toEqual(["leak", "trip"]);
      await ix.putThreadSummary("v", "leak", "");
      expect((await ix.threadSummaries("v")).map((s) => s.threadId)).toEqual(["trip"]);
      await ix.deleteThread("v", "trip");
      expect(await ix.threadSummaries("v")).toEqual([]);
      expect(await ix.threadSummaries("v/writer")).toEqual([]);
      expect((await ix.threadSummaries("v_x")).map((s) => s.threadId)).toEqual(["trip"]);
    }
  });

  it("triples: identical kept, corrections supersede, one-hop recall in the same order", async () => {
    const out: unknown[] = [];
    for (const ix of both()) {
      const a = await ix.addTriple("w", { subject: "Alice", relation: "manages", object: "Project Falcon", confidence: 0.9, source: "t1" }, false, "2026-01-01T00:00:00Z");
      expect(await ix.addTriple("w", { subject: "alice", relation: "Manages", object: "project falcon", confidence: 0.5, source: "t2" }, false)).toBe(a);
      await ix.addTriple("w", { subject: "Project Falcon", relation: "uses", object: "Kafka", confidence: 0.8, source: "t1" }, false, "2026-01-01T00:00:01Z");
      const pulsar = await ix.addTriple("w", { subject: "Project Falcon", relation: "uses", object: "Pulsar", confidence: 0.85, source: "t2" }, true, "2026-01-02T00:00:00Z");
      await ix.addTriple("w", { subject: "User", relation: "reports to", object: "Alice", confidence: 0.7, source: "t1" }, false, "2026-01-01T00:00:02Z");
      const all = await ix.triples("w");
      expect(all.find((t) => t.object === "Kafka")?.supersededBy).toBe(pulsar);
      const recalled = await ix.recallTriples("w", "What does project falcon use, and who is Alice?");
      out.push(recalled.map((t) => `${t.subject}|${t.relation}|${t.object}|${t.confidence}`));
      expect(recalled.some((t) => t.object === "Kafka")).toBe(false);
    }
    expect(out[1]).toEqual(out[0]);
  });

  it("recall statistics, embeddings and the per-user switch are shared by every process on the database", async () => {
    for (const ix of both()) {
      await ix.recordAccess("u", ["fact_k1", "fact_k1", "fact_r1"], "2026-02-01T00:00:00Z");
      await ix.recordAccess("u", ["fact_k1"], "2026-02-02T00:00:00Z");
      expect(Object.fromEntries(await ix.usage("u"))).toEqual({
        fact_k1: { accessHeat: 3, lastAccessedAt: "2026-02-02T00:00:00Z" },
        fact_r1: { accessHeat: 1, lastAccessedAt: "2026-02-01T00:00:00Z" },
      });
    }
    const v = (xs: number[]) => new Float32Array(xs);
    await pgA.putVectors("u", "emb", [{ id: "fact_k1", contentKey: "k1", vec: v([1, 0, 0]) }]);
    expect([...(await pgA.vectors("u", "emb")).keys()]).toEqual(["fact_k1"]); // now cached by A
    await pgB.putVectors("u", "emb", [{ id: "fact_r1", contentKey: "r1", vec: v([0, 0.5, 0.25]) }]);
    const seen = await pgA.vectors("u", "emb");
    expect([...seen.keys()].sort()).toEqual(["fact_k1", "fact_r1"]); // B's write is seen by A
    expect([...seen.get("fact_r1")!]).toEqual([0, 0.5, 0.25]);
    expect(Object.fromEntries(await pgB.vectorKeys("u", "emb"))).toEqual({ fact_k1: "k1", fact_r1: "r1" });
    // a re-index drops the vectors of facts that are gone
    await pgB.syncFacts("u", "r3", corpus().filter((f) => f.id !== "fact_r1"));
    expect([...(await pgA.vectors("u", "emb")).keys()]).toEqual(["fact_k1"]);

    expect(await pgA.userEnabled("alice")).toBe(true);
    await pgB.setUserEnabled("alice", false);
    expect(await pgA.userEnabled("alice")).toBe(false);
    await pgA.setUserEnabled("alice", true);
    expect(await pgB.userEnabled("alice")).toBe(true);
  });

  it("clearing a scope removes everything stored for it, and only for it", async () => {
    await pgA.syncFacts("z", "s1", [fact("fact_z1", "Zed likes zucchini")]);
    await pgA.putThreadSummary("z", "t", "zucchini recipes");
    await pgA.addTriple("z", { subject: "Zed", relation: "likes", object: "zucchini", confidence: 1, source: "t" }, false);
    await pgA.clearScope("z");
    expect(await pgB.searchFacts("z", "zucchini")).toEqual([]);
    expect(await pgB.threadSummaries("z")).toEqual([]);
    expect(await pgB.triples("z")).toEqual([]);
    expect(await pgB.syncFacts("z", "s1", [fact("fact_z1", "Zed likes zucchini")])).toBe(true); // the signature went too
    expect((await pgB.searchFacts("u", "kafka")).length).toBeGreaterThan(0);
  });

  it("a MemoryService on database.backend postgres writes no memory.db and recalls from PostgreSQL", async () => {
    const t = tempDir();
    const pool = await openPgPool({ url: fresh.url, max: 2, log });
    pools.push(pool);
    const service = new MemoryService({ config: { backend_config: { debounce_seconds: 0.01 } }, dataDir: t.dir, database: { backend: "postgres", postgres_url: fresh.url }, pgPool: pool });
    try {
      expect(service.index).toBeInstanceOf(PgMemoryIndex);
      const scope = { userId: "svc-user", agentName: null };
      const { factId } = await service.createFact(scope, { content: "User's favourite editor is Helix", confidence: 0.9 });
      await service.createFact(scope, { content: "User lives in Lisbon", confidence: 0.9 });
      expect((await service.search(scope, "which editor")).map((f) => f.id)).toEqual([factId]);
      const out = await service.recall(scope, "What editor should I configure?");
      expect(out.report.factIds[0]).toBe(factId);
      await service.setUserEnabled("svc-user", false);
      expect(await service.isUserEnabled("svc-user")).toBe(false);
      expect(await service.enqueue({ threadId: "t1", userId: "svc-user", messages: [] })).toMatchObject({ queued: false, reason: "user_disabled" });
      const rows = await pool.query("SELECT fact_id FROM memory_facts WHERE scope = 'svc-user' ORDER BY fact_id");
      expect(rows.rows.map((r) => r.fact_id).sort()).toHaveLength(2);
    } finally {
      await service.close();
    }
    const files = readdirSync(t.dir, { recursive: true }).map(String);
    expect(files.filter((f) => /\.db(-wal|-shm)?$/.test(f))).toEqual([]);
    expect(existsSync(path.join(t.dir, "memory.db"))).toBe(false);
    t.cleanup();
  });

  it("backend postgres without a pool or postgres_url names the key to set", () => {
    const t = tempDir();
    try {
      expect(() => new MemoryService({ config: {}, dataDir: t.dir, database: { backend: "postgres" } })).toThrow(/database\.postgres_url/);
    } finally {
      t.cleanup();
    }
  });
});
