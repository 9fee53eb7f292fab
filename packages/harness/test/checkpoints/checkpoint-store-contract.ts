import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Checkpointer } from "../../src/checkpoints";
import type { CheckpointRecord, CheckpointStore } from "../../src/checkpoints";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

/** A fresh, empty store and how to dispose of it. */
export type CheckpointStoreFactory = () => Promise<{ store: CheckpointStore; dispose(): Promise<void> }>;

function rec(threadId: string, checkpointId: string, parentId: string | null, patch: Partial<CheckpointRecord> = {}): CheckpointRecord {
  return { threadId, checkpointId, parentId, createdAt: "2026-12-01T00:00:00.000Z", metadata: { step: 0, source: "loop" }, delta: {}, ...patch };
}

/**
 * The behaviour every {@link CheckpointStore} shares (memory, SQLite,
 * PostgreSQL): what a put keeps, ordering, ancestry, refusal of a missing
 * parent, isolation of threads, and linear storage.
 */
export function describeCheckpointStoreContract(name: string, factory: CheckpointStoreFactory): void {
  describe(`${name} checkpoint store (contract)`, () => {
    const withStore = async (fn: (store: CheckpointStore) => Promise<void>) => {
      const { store, dispose } = await factory();
      try {
        await fn(store);
      } finally {
        await store.close();
        await dispose();
      }
    };

    it("gives back exactly the record that was put", () =>
      withStore(async (store) => {
        const root = rec("t", "c0", null, {
          metadata: { step: -1, source: "input", run_id: "r1", writer: "input", interrupts: [{ id: "i1", value: { q: "ok?" }, toolCallId: "tc" }] },
          delta: {
            messages: [
              { op: "add", message: humanMessage("héllo \u{1F600} \"quoted\" \\ back\nslash \u0000 nul", { id: "m1" }) },
              { op: "add", message: aiMessage("", { id: "m2", tool_calls: [{ id: "tc", name: "x", args: { deep: [1, { a: null }] } }] }) },
            ],
            values: { title: "T", todos: [{ content: "a", status: "pending" }], empty: {} },
          },
        });
        await store.put(root);
        const child = rec("t", "c1", "c0", { delta: { messages: [{ op: "remove", id: "m2" }, { op: "clear" }, { op: "replace", message: humanMessage("r", { id: "m1" }) }] } });
        await store.put(child);
        expect(await store.get("t", "c0")).toEqual(root);
        expect(await store.get("t")).toEqual(child);
        expect(await store.get("t", "nope")).toBeUndefined();
        expect(await store.get("other")).toBeUndefined();
        // A returned record is a copy.
        const got = (await store.get("t", "c0"))!;
        (got.delta.values as Record<string, unknown>).title = "mutated";
        expect((await store.get("t", "c0"))!.delta.values).toMatchObject({ title: "T" });
      }));

    it("orders by put: head, newest-first lists with limit and before, root-first chains", () =>
      withStore(async (store) => {
        // ids that sort against their order of creation, so nothing orders by id
        const ids = ["z", "b", "y", "a", "x"];
        let parent: string | null = null;
        for (const id of ids) {
          await store.put(rec("o", id, parent));
          parent = id;
        }
        await store.put(rec("o", "fork", "b")); // a fork from the second checkpoint is the newest
        if (store.headId) expect(await store.headId("o")).toBe("fork");
        expect((await store.get("o"))?.checkpointId).toBe("fork");
        expect((await store.list("o")).map((r) => r.checkpointId)).toEqual(["fork", "x", "a", "y", "b", "z"]);
        expect((await store.list("o", { limit: 2 })).map((r) => r.checkpointId)).toEqual(["fork", "x"]);
        expect((await store.list("o", { before: "a" })).map((r) => r.checkpointId)).toEqual(["y", "b", "z"]);
        expect((await store.list("o", { before: "a", limit: 1 })).map((r) => r.checkpointId)).toEqual(["y"]);
        expect(await store.list("o", { before: "unknown" })).toEqual([]);
        expect(await store.list("o", { limit: 0 })).toEqual([]);
        expect((await store.chain("o", "x")).map((r) => r.checkpointId)).toEqual(["z", "b", "y", "a", "x"]);
        expect((await store.chain("o", "fork")).map((r) => r.checkpointId)).toEqual(["z", "b", "fork"]);
        expect(await store.chain("o", "unknown")).toEqual([]);
        if (store.headId) expect(await store.headId("empty")).toBeUndefined();
      }));

    it("refuses a missing parent (also one stored only in another thread) and stores nothing", () =>
      withStore(async (store) => {
        await store.put(rec("elsewhere", "p", null));
        await expect(store.put(rec("orphan", "c1", "never-stored"))).rejects.toMatchObject({ code: "checkpoint_parent_missing" });
        await expect(store.put(rec("orphan", "c1", "p"))).rejects.toMatchObject({ code: "checkpoint_parent_missing" });
        expect(await store.get("orphan")).toBeUndefined();
        expect(await store.list("orphan")).toEqual([]);
        await store.put(rec("orphan", "c1", null));
        await store.put(rec("orphan", "c2", "c1"));
        expect((await store.get("orphan"))?.checkpointId).toBe("c2");
      }));

    it("deleteThread removes one thread only, after which its ids can start again", () =>
      withStore(async (store) => {
        await store.put(rec("d1", "a", null));
        await store.put(rec("d1", "b", "a"));
        await store.put(rec("d2", "a", null));
        await store.deleteThread("d1");
        expect(await store.get("d1")).toBeUndefined();
        expect(await store.list("d1")).toEqual([]);
        expect((await store.get("d2"))?.checkpointId).toBe("a");
        await expect(store.put(rec("d1", "c", "b"))).rejects.toMatchObject({ code: "checkpoint_parent_missing" });
        await store.put(rec("d1", "a", null));
        expect((await store.list("d1")).map((r) => r.checkpointId)).toEqual(["a"]);
      }));

    it("keeps concurrent threads' chains apart and complete", () =>
      withStore(async (store) => {
        await Promise.all(
          Array.from({ length: 12 }, async (_, t) => {
            let parent: string | null = null;
            for (let i = 0; i < 8; i++) {
              const id = `t${t}-c${i}`;
              await store.put(rec(`conc-${t}`, id, parent, { metadata: { step: i - 1, source: i ? "loop" : "input" } }));
              parent = id;
            }
          }),
        );
        for (let t = 0; t < 12; t++) {
          const chain = await store.chain(`conc-${t}`, `t${t}-c7`);
          expect(chain.map((r) => r.metadata.step)).toEqual([-1, 0, 1, 2, 3, 4, 5, 6]);
          expect(chain.every((r) => r.threadId === `conc-${t}`)).toBe(true);
        }
      }));

    it("puts handed in without waiting are stored in order; a chain on a missing parent fails, later good writes do not", () =>
      withStore(async (store) => {
        const ids = Array.from({ length: 20 }, (_, i) => `q${String(i).padStart(2, "0")}`);
        await Promise.all(ids.map((id, i) => store.put(rec("q", id, i ? ids[i - 1] : null, { metadata: { step: i, source: "loop" } }))));
        expect((await store.list("q")).map((r) => r.checkpointId)).toEqual([...ids].reverse());
        expect((await store.chain("q", "q19")).map((r) => r.metadata.step)).toEqual(ids.map((_, i) => i));
        // a fork and two chains queued in one go
        await Promise.all([store.put(rec("q", "f1", "q05")), store.put(rec("q", "f2", "f1")), store.put(rec("q", "g1", "q19"))]);
        expect((await store.list("q", { limit: 3 })).map((r) => r.checkpointId)).toEqual(["g1", "f2", "f1"]);
        expect((await store.chain("q", "f2")).map((r) => r.checkpointId)).toEqual([...ids.slice(0, 6), "f1", "f2"]);
        const settled = await Promise.allSettled([
          store.put(rec("q", "m1", "missing")),
          store.put(rec("q", "m2", "m1")),
          store.put(rec("q", "m3", "m2")),
          store.put(rec("q", "g2", "g1")),
        ]);
        expect(settled.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "fulfilled"]);
        for (const r of settled.slice(0, 3)) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "checkpoint_parent_missing" });
        expect(await store.get("q", "m1")).toBeUndefined();
        expect((await store.get("q"))?.checkpointId).toBe("g2");
        // a delete queued between writes applies between them
        const order = [store.put(rec("q", "g3", "g2")), store.deleteThread("q"), store.put(rec("q", "n1", null)), store.put(rec("q", "n2", "n1"))];
        await Promise.all(order);
        expect((await store.list("q")).map((r) => r.checkpointId)).toEqual(["n2", "n1"]);
      }));

    it("through the checkpointer: a child queued behind a parent whose write failed is refused", () =>
      withStore(async (store) => {
        const cp = new Checkpointer(store);
        const s1 = await cp.save("chain", { checkpointId: null, values: undefined }, { messages: [humanMessage("a", { id: "1" })] }, { step: -1, source: "input" });
        const put = store.put.bind(store);
        let calls = 0;
        store.put = (r) => (++calls === 1 ? Promise.reject(new Error("disk full")) : put(r));
        const bad = cp.queue("chain", { checkpointId: s1.record.checkpointId, values: s1.values }, { messages: [...s1.values.messages, aiMessage("b", { id: "2" })] }, { step: 0, source: "loop" });
        const next = cp.queue("chain", { checkpointId: bad.loaded.record.checkpointId, values: bad.loaded.values }, { messages: [...bad.loaded.values.messages, aiMessage("c", { id: "3" })] }, { step: 1, source: "loop" });
        const settled = await Promise.allSettled([bad.durable, next.durable]);
        expect(settled.map((r) => r.status)).toEqual(["rejected", "rejected"]);
        expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: "checkpoint_parent_missing" });
        store.put = put;
        expect((await new Checkpointer(store).load("chain"))?.values.messages.map((m) => m.content)).toEqual(["a"]);
      }));

    it("storage grows linearly with the conversation: each message is stored once", () =>
      withStore(async (store) => {
        const echo = tool({ name: "echo", description: "e", schema: z.object({ t: z.string() }), execute: ({ t }) => t.repeat(20) });
        const model = new ScriptedModel([], { onExhausted: "error" });
        for (let turn = 0; turn < 20; turn++) model.push({ text: "x".repeat(200), toolCalls: [{ name: "echo", args: { t: "abc" } }] }, "y".repeat(200));
        const agent = createAgent({ model, tools: [echo], checkpointer: store });
        const storedAfter: number[] = [];
        const stored = async () => (await store.list("lin")).reduce((n, r) => n + JSON.stringify(r.delta).length + JSON.stringify(r.metadata).length, 0);
        for (let turn = 0; turn < 20; turn++) {
          const r = await agent.invoke({ messages: [humanMessage(`turn ${turn} ${"q".repeat(100)}`)] }, { threadId: "lin" });
          expect(r.status, JSON.stringify(r.error ?? (r as { errors?: unknown }).errors ?? r)).toBe("success");
          if (turn === 9 || turn === 19) storedAfter.push(await stored());
        }
        const records = await store.list("lin");
        const adds = records.flatMap((r) => r.delta.messages ?? []).filter((op) => op.op === "add").length;
        const final = (await agent.getState("lin"))!.values.messages;
        expect(adds).toBe(final.length);
        // Twice the turns, about twice the bytes (quadratic growth would be ~4x).
        expect(storedAfter[1] / storedAfter[0]).toBeLessThan(2.3);
        const raw = final.reduce((n, m) => n + JSON.stringify(m).length, 0);
        expect(storedAfter[1] / raw).toBeLessThan(2);
      }));
  });
}
