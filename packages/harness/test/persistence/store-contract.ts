import { describe, expect, it } from "vitest";
import { emptyUsage } from "../../src/persistence";
import type { PersistenceStores, RunRecord, ThreadRecord, ThreadSearch } from "../../src/persistence";

/** Fresh, empty stores (closed by the suite with `close()`). */
export type StoresFactory = () => Promise<PersistenceStores>;

export function threadRecord(id: string, patch: Partial<ThreadRecord> = {}): ThreadRecord {
  return { threadId: id, userId: "default", status: "idle", metadata: {}, displayName: null, createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z", ...patch };
}

export function runRecord(id: string, threadId: string, patch: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: id,
    threadId,
    userId: "default",
    assistantId: "lead_agent",
    status: "pending",
    metadata: {},
    kwargs: {},
    multitaskStrategy: "reject",
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    usage: emptyUsage(),
    stopReason: null,
    error: null,
    modelName: null,
    ...patch,
  };
}

/**
 * The behaviour every backend's thread, run and transcript stores share
 * (memory, SQLite, PostgreSQL): the gateway and the run service rely on
 * exactly this, whichever `database.backend` is configured.
 */
export function describeStoreContract(name: string, factory: StoresFactory): void {
  describe(`${name} stores (contract)`, () => {
    const withStores = async (fn: (s: PersistenceStores) => Promise<void>) => {
      const s = await factory();
      try {
        await fn(s);
      } finally {
        await s.close();
      }
    };

    it("threads: create/get/update/delete, search order, filters, paging and user scoping", () =>
      withStores(async (s) => {
        await s.threads.create(threadRecord("a", { updatedAt: "2024-01-02T00:00:00.000Z", metadata: { kind: "x" } }));
        await s.threads.create(threadRecord("b", { updatedAt: "2024-01-03T00:00:00.000Z", metadata: { kind: "y" } }));
        await s.threads.create(threadRecord("c", { updatedAt: "2024-01-03T00:00:00.000Z", metadata: { kind: "x", deerflow_pinned: true } }));
        await s.threads.create(threadRecord("d", { updatedAt: "2024-01-09T00:00:00.000Z", userId: "other" }));
        await expect(s.threads.create(threadRecord("a"))).rejects.toThrow();
        const ids = async (f: Partial<ThreadSearch> = {}) => (await s.threads.search({ userId: "default", limit: 100, offset: 0, ...f })).map((t) => t.threadId);
        // pinned first, then updated_at desc, then id desc; other users' rows never listed
        expect(await ids()).toEqual(["c", "b", "a"]);
        await s.threads.create(threadRecord("e", { updatedAt: "2024-01-03T00:00:00.000Z" }));
        expect(await ids()).toEqual(["c", "e", "b", "a"]);
        expect(await ids({ metadata: { kind: "x" } })).toEqual(["c", "a"]);
        expect(await ids({ limit: 2, offset: 1 })).toEqual(["e", "b"]);
        expect(await ids({ offset: 10 })).toEqual([]);
        await s.threads.update("a", { status: "running", displayName: "Hello", updatedAt: "2024-02-01T00:00:00.000Z" });
        expect(await ids({ status: "running" })).toEqual(["a"]);
        expect((await s.threads.listRunning()).map((t) => t.threadId)).toEqual(["a"]);
        expect(await s.threads.get("a")).toEqual(threadRecord("a", { status: "running", displayName: "Hello", updatedAt: "2024-02-01T00:00:00.000Z", metadata: { kind: "x" } }));
        await s.threads.update("missing", { status: "error" });
        expect(await s.threads.get("missing")).toBeUndefined();
        await s.threads.delete("a");
        expect(await s.threads.get("a")).toBeUndefined();
        // returned rows are copies: mutating them does not change the store
        const got = (await s.threads.get("b"))!;
        got.metadata.kind = "mutated";
        expect((await s.threads.get("b"))!.metadata.kind).toBe("y");
      }));

    it("threads: metadata filters compare whole values; a missing key never matches; pinned needs true", () =>
      withStores(async (s) => {
        await s.threads.create(threadRecord("n1", { metadata: { n: 1, tags: ["a", "b"], obj: { k: "v" }, flag: false } }));
        await s.threads.create(threadRecord("n2", { metadata: { n: 2, tags: ["a"], deerflow_pinned: "true" } }));
        await s.threads.create(threadRecord("n3", { metadata: { n: null, deerflow_pinned: true }, updatedAt: "2023-01-01T00:00:00.000Z" }));
        const ids = async (metadata: Record<string, unknown>) => (await s.threads.search({ userId: "default", limit: 10, offset: 0, metadata })).map((t) => t.threadId);
        expect(await ids({ n: 1 })).toEqual(["n1"]);
        expect(await ids({ tags: ["a"] })).toEqual(["n2"]);
        expect(await ids({ tags: ["a", "b"] })).toEqual(["n1"]);
        expect(await ids({ obj: { k: "v" } })).toEqual(["n1"]);
        expect(await ids({ flag: false })).toEqual(["n1"]);
        expect(await ids({ n: null })).toEqual(["n3"]);
        expect(await ids({ n: "1" })).toEqual([]);
        expect(await ids({ absent: 1 })).toEqual([]);
        // only the boolean true pins: "true" (a string) sorts by date like any other
        expect(await ids({})).toEqual(["n3", "n2", "n1"]);
      }));

    it("threads: text survives as written (unicode, quotes, long values)", () =>
      withStores(async (s) => {
        const odd = { title: "naïve \u{1F680} 'single' \"double\" \\ back", long: "x".repeat(20_000), nested: { a: [1, 2.5, true, null] } };
        await s.threads.create(threadRecord("u", { metadata: odd, displayName: "Ünïcode ✓" }));
        expect(await s.threads.get("u")).toEqual(threadRecord("u", { metadata: odd, displayName: "Ünïcode ✓" }));
        expect((await s.threads.search({ userId: "default", limit: 10, offset: 0, metadata: { title: odd.title } })).map((t) => t.threadId)).toEqual(["u"]);
      }));

    it("runs: newest first per thread, update, orphan recovery, delete by thread", () =>
      withStores(async (s) => {
        await s.runs.create(runRecord("r1", "t", { createdAt: "2024-01-01T00:00:01.000Z", status: "success" }));
        await s.runs.create(runRecord("r2", "t", { createdAt: "2024-01-01T00:00:02.000Z", status: "running" }));
        await s.runs.create(runRecord("r3", "u", { status: "pending" }));
        await expect(s.runs.create(runRecord("r1", "t"))).rejects.toThrow();
        expect((await s.runs.listByThread("t")).map((r) => r.runId)).toEqual(["r2", "r1"]);
        await s.runs.update("r1", { usage: { ...emptyUsage(), totalTokens: 42 }, stopReason: "done" });
        expect((await s.runs.get("r1"))!).toMatchObject({ status: "success", stopReason: "done", usage: { totalTokens: 42, llmCallCount: 0 } });
        const recovered = await s.runs.recoverOrphans("2024-05-05T00:00:00.000Z");
        expect(recovered.map((r) => r.runId).sort()).toEqual(["r2", "r3"]);
        expect(recovered.every((r) => r.status === "error" && r.stopReason === "orphan_recovered" && r.updatedAt === "2024-05-05T00:00:00.000Z")).toBe(true);
        expect(await s.runs.get("r2")).toMatchObject({ status: "error", stopReason: "orphan_recovered", updatedAt: "2024-05-05T00:00:00.000Z" });
        expect((await s.runs.get("r1"))!.status).toBe("success");
        expect(await s.runs.recoverOrphans("2024-05-06T00:00:00.000Z")).toEqual([]);
        await s.runs.deleteByThread("t");
        expect(await s.runs.listByThread("t")).toEqual([]);
        expect(await s.runs.get("r3")).toBeDefined();
      }));

    it("runs: equal creation times list the later insert first; a record round-trips whole", () =>
      withStores(async (s) => {
        for (const id of ["q1", "q2", "q3"]) await s.runs.create(runRecord(id, "same"));
        expect((await s.runs.listByThread("same")).map((r) => r.runId)).toEqual(["q3", "q2", "q1"]);
        const full = runRecord("full", "th", {
          status: "running",
          metadata: { from: "api", n: [1, 2] },
          kwargs: { input: { messages: [{ type: "human", content: "hé" }] }, config: { recursion_limit: 50 } },
          multitaskStrategy: "enqueue",
          usage: { ...emptyUsage(), totalTokens: 9, subagentTokens: 3 },
          stopReason: null,
          error: null,
          modelName: "gpt-x",
          execution: { settings: { model: "gpt-x" }, context: { thread_id: "th" }, configurable: {}, recursionLimit: 50, streamModes: ["values"], subgraphs: false },
        });
        await s.runs.create(full);
        expect(await s.runs.get("full")).toEqual(full);
        await s.runs.update("full", { execution: null, status: "success" });
        expect(await s.runs.get("full")).toMatchObject({ status: "success", execution: null });
      }));

    it("updates change only the patched fields, so concurrent patches of different fields both land", () =>
      withStores(async (s) => {
        await s.threads.create(threadRecord("p", { metadata: { keep: 1 }, displayName: "Old" }));
        await s.runs.create(runRecord("rp", "p", { metadata: { keep: 2 }, modelName: "m" }));
        await Promise.all([
          s.threads.update("p", { status: "running" }),
          s.threads.update("p", { displayName: "New", updatedAt: "2024-03-03T00:00:00.000Z" }),
          s.runs.update("rp", { status: "running", updatedAt: "2024-03-03T00:00:00.000Z" }),
          s.runs.update("rp", { usage: { ...emptyUsage(), totalTokens: 7 }, error: "boom" }),
        ]);
        expect(await s.threads.get("p")).toMatchObject({ status: "running", displayName: "New", metadata: { keep: 1 }, updatedAt: "2024-03-03T00:00:00.000Z", createdAt: "2024-01-01T00:00:00.000Z" });
        expect(await s.runs.get("rp")).toMatchObject({ status: "running", error: "boom", usage: { totalTokens: 7 }, metadata: { keep: 2 }, modelName: "m", assistantId: "lead_agent" });
        await s.threads.update("p", { metadata: { replaced: true }, displayName: null });
        expect(await s.threads.get("p")).toMatchObject({ metadata: { replaced: true }, displayName: null });
        await s.runs.update("missing", { status: "error" });
        expect(await s.runs.get("missing")).toBeUndefined();
      }));

    // The run recorder hands in a run's final writes and returns; a client reading the run as its stream ends must
    // see them. So a read sees every write handed in before it, awaited or not, and one row's writes land in order.
    it("reads see the writes handed in just before them, awaited or not: get, search and list, run status transitions", () =>
      withStores(async (s) => {
        const writes: Array<Promise<unknown>> = [];
        const w = (p: Promise<unknown>) => void writes.push(p);
        const n = 24;
        const threadIds = Array.from({ length: n }, (_, i) => `ryw-t${i}`);
        for (const id of threadIds) w(s.threads.create(threadRecord(id, { updatedAt: `2024-01-01T00:00:${String(threadIds.indexOf(id)).padStart(2, "0")}.000Z` })));
        expect((await Promise.all(threadIds.map((id) => s.threads.get(id)))).map((t) => t?.threadId)).toEqual(threadIds);
        // a pending → running → success transition per run, none awaited, each read at once
        for (const [i, id] of threadIds.entries()) {
          w(s.runs.create(runRecord(`ryw-r${i}`, id)));
          w(s.threads.update(id, { status: "running" }));
          w(s.runs.update(`ryw-r${i}`, { status: "running", updatedAt: "2024-01-02T00:00:00.000Z" }));
        }
        expect((await Promise.all(threadIds.map((_, i) => s.runs.get(`ryw-r${i}`)))).map((r) => r?.status)).toEqual(threadIds.map(() => "running"));
        expect((await s.threads.listRunning()).map((t) => t.threadId).sort()).toEqual([...threadIds].sort());
        for (const [i, id] of threadIds.entries()) {
          w(s.runs.update(`ryw-r${i}`, { status: "success", usage: { ...emptyUsage(), totalTokens: i }, stopReason: "done" }));
          w(s.threads.update(id, { status: "idle", displayName: `title ${i}` }));
          w(s.threads.update(id, { updatedAt: "2024-02-01T00:00:00.000Z" }));
        }
        const ended = await Promise.all(threadIds.map((_, i) => s.runs.get(`ryw-r${i}`)));
        expect(ended.map((r) => [r?.status, r?.usage.totalTokens, r?.stopReason, r?.updatedAt])).toEqual(
          threadIds.map((_, i) => ["success", i, "done", "2024-01-02T00:00:00.000Z"]),
        );
        expect(await s.threads.listRunning()).toEqual([]);
        const found = await s.threads.search({ userId: "default", status: "idle", limit: 100, offset: 0 });
        expect(found.map((t) => [t.threadId, t.displayName, t.updatedAt]).sort()).toEqual(
          threadIds.map((id, i) => [id, `title ${i}`, "2024-02-01T00:00:00.000Z"]).sort(),
        );
        // a later run of a thread lists first as soon as it is handed in; delete by thread, then a new run
        w(s.runs.create(runRecord("ryw-later", "ryw-t0", { createdAt: "2024-03-01T00:00:00.000Z", status: "running" })));
        expect((await s.runs.listByThread("ryw-t0")).map((r) => [r.runId, r.status])).toEqual([["ryw-later", "running"], ["ryw-r0", "success"]]);
        w(s.runs.update("ryw-later", { status: "interrupted" }));
        w(s.runs.deleteByThread("ryw-t0"));
        w(s.runs.create(runRecord("ryw-after", "ryw-t0")));
        expect((await s.runs.listByThread("ryw-t0")).map((r) => r.runId)).toEqual(["ryw-after"]);
        expect(await s.runs.get("ryw-later")).toBeUndefined();
        // orphan recovery (a read and a write, awaited by its callers) sees a run created just before it
        w(s.runs.create(runRecord("ryw-orphan", "ryw-t1", { status: "running" })));
        expect((await s.runs.recoverOrphans("2024-05-05T00:00:00.000Z")).map((r) => r.runId).sort()).toEqual(["ryw-after", "ryw-orphan"]);
        expect(await s.runs.get("ryw-orphan")).toMatchObject({ status: "error", stopReason: "orphan_recovered" });
        // a delete then a read; a transcript batch then a page
        w(s.threads.delete("ryw-t2"));
        expect(await s.threads.get("ryw-t2")).toBeUndefined();
        w(s.messages.record("ryw-t3", "ryw-r3", [{ id: "m1", type: "human", content: "q" }], "2024-01-01T00:00:00.000Z"));
        w(s.messages.record("ryw-t3", "ryw-r3", [{ id: "m1", type: "human", content: "q2" }, { id: "m2", type: "ai", content: "a" }], "2024-01-01T00:00:00.000Z"));
        expect((await s.messages.page("ryw-t3", { limit: 10 })).rows.map((r) => [r.messageId, r.content.content])).toEqual([["m1", "q2"], ["m2", "a"]]);
        expect([...(await s.messages.runIds("ryw-t3")).keys()]).toEqual(["m1", "m2"]);
        w(s.messages.deleteByThread("ryw-t3"));
        expect((await s.messages.page("ryw-t3", { limit: 10 })).rows).toEqual([]);
        await Promise.all(writes);
      }));

    it("one row's patches land in the order they were handed in, merged or not; a failed write does not stop the next", () =>
      withStores(async (s) => {
        await s.runs.create(runRecord("ord", "t-ord"));
        const writes: Array<Promise<void>> = [];
        for (let i = 1; i <= 40; i++) writes.push(s.runs.update("ord", { error: `step ${i}`, ...(i % 3 ? {} : { stopReason: `at ${i}` }) }));
        writes.push(s.runs.update("ord", { error: undefined, status: "success" }));
        expect(await s.runs.get("ord")).toMatchObject({ status: "success", error: "step 40", stopReason: "at 39" });
        await Promise.all(writes);
        // a duplicate create fails alone; the patch handed in after it still lands
        const dup = s.threads.create(threadRecord("dup"));
        const again = s.threads.create(threadRecord("dup"));
        const after = s.threads.update("dup", { status: "running" });
        await dup;
        await expect(again).rejects.toThrow();
        await after;
        expect((await s.threads.get("dup"))?.status).toBe("running");
      }));

    it("messages: insert once per id (content replaced in place), paging from the end, run ids", () =>
      withStores(async (s) => {
        await s.messages.record("t", "r1", [{ id: "m1", type: "human", content: "hi" }, { id: "m2", type: "ai", content: "draft" }, { type: "ai", content: "no id" }], "2024-01-01T00:00:00.000Z");
        await s.messages.record("t", "r2", [{ id: "m1", type: "human", content: "hi" }, { id: "m2", type: "ai", content: "final" }, { id: "m3", type: "human", content: "again" }], "2024-01-02T00:00:00.000Z");
        await s.messages.record("other", "r9", [{ id: "m1", type: "human", content: "elsewhere" }], "2024-01-02T00:00:00.000Z");
        const all = await s.messages.page("t", { limit: 10 });
        expect(all.hasMore).toBe(false);
        expect(all.rows.map((r) => [r.messageId, r.runId, r.messageType, r.content.content, r.createdAt])).toEqual([
          ["m1", "r1", "human", "hi", "2024-01-01T00:00:00.000Z"],
          ["m2", "r1", "ai", "final", "2024-01-01T00:00:00.000Z"],
          ["m3", "r2", "human", "again", "2024-01-02T00:00:00.000Z"],
        ]);
        expect(all.rows.every((r) => r.threadId === "t" && typeof r.seq === "number")).toBe(true);
        const last = await s.messages.page("t", { limit: 2 });
        expect(last.hasMore).toBe(true);
        expect(last.rows.map((r) => r.messageId)).toEqual(["m2", "m3"]);
        const before = await s.messages.page("t", { limit: 2, beforeSeq: last.rows[0].seq });
        expect(before).toMatchObject({ hasMore: false, rows: [{ messageId: "m1" }] });
        expect([...(await s.messages.runIds("t")).entries()]).toEqual([["m1", "r1"], ["m2", "r1"], ["m3", "r2"]]);
        await s.messages.record("t", "r3", [], "2024-01-03T00:00:00.000Z");
        await s.messages.record("t", "r3", [{ type: "ai", content: "only id-less" }], "2024-01-03T00:00:00.000Z");
        expect((await s.messages.page("t", { limit: 10 })).rows).toHaveLength(3);
        await s.messages.deleteByThread("t");
        expect((await s.messages.page("t", { limit: 10 })).rows).toEqual([]);
        expect((await s.messages.page("other", { limit: 10 })).rows).toHaveLength(1);
      }));

    it("messages: an id repeated in one batch keeps its first position and its last content; big batches keep order", () =>
      withStores(async (s) => {
        await s.messages.record("b", "r1", [{ id: "x", type: "ai", content: "1" }, { id: "y", type: "human", content: "y" }, { id: "x", type: "ai", content: "2" }], "2024-01-01T00:00:00.000Z");
        expect((await s.messages.page("b", { limit: 10 })).rows.map((r) => [r.messageId, r.content.content])).toEqual([["x", "2"], ["y", "y"]]);
        const many = Array.from({ length: 300 }, (_, i) => ({ id: `k${i}`, type: i % 2 ? "ai" : "human", content: `${i} "q" \\ ${"\u00e9".repeat(i % 7)}` }));
        await s.messages.record("big", "r1", many, "2024-01-01T00:00:00.000Z");
        const rows: string[] = [];
        let beforeSeq: number | undefined;
        for (let i = 0; i < 10; i++) {
          const p = await s.messages.page("big", { limit: 64, beforeSeq });
          rows.unshift(...p.rows.map((r) => r.messageId));
          if (!p.hasMore) break;
          beforeSeq = p.rows[0].seq;
        }
        expect(rows).toEqual(many.map((m) => m.id));
        const got = (await s.messages.page("big", { limit: 1 })).rows[0];
        expect(got.content).toEqual(many[299]);
      }));

    it("messages: concurrent batches of one thread are all kept, each id once", () =>
      withStores(async (s) => {
        await Promise.all(
          Array.from({ length: 8 }, (_, b) =>
            s.messages.record("c", `r${b}`, [{ id: "shared", type: "system", content: `from ${b}` }, ...Array.from({ length: 5 }, (_, i) => ({ id: `b${b}-${i}`, type: "ai", content: "x" }))], "2024-01-01T00:00:00.000Z"),
          ),
        );
        const rows = (await s.messages.page("c", { limit: 100 })).rows;
        expect(rows).toHaveLength(41);
        expect(new Set(rows.map((r) => r.messageId)).size).toBe(41);
        expect(rows.filter((r) => r.messageId === "shared")).toHaveLength(1);
      }));
  });
}
