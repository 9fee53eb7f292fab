import { describe, expect, it } from "vitest";
import {
  applyUpdate,
  initialState,
  mergeArtifacts,
  mergeDelegations,
  mergePromoted,
  mergeSandbox,
  mergeSkillContext,
  mergeTodos,
  mergeViewedImages,
  threadStateSchema,
  keepIfNull,
} from "../../src/state";
import type { DelegationEntry } from "../../src/state";
import { InvalidUpdateError } from "../../src/errors";

const entry = (id: string, status: string, extra: Partial<DelegationEntry> = {}): DelegationEntry => ({
  id, status, description: "d", subagent_type: "general-purpose", created_at: `t-${id}-${status}`, ...extra,
});

describe("DeerFlow ThreadState reducers", () => {
  it("sandbox: idempotent, conflicting id raises", () => {
    expect(mergeSandbox(null, { sandbox_id: "a" })).toEqual({ sandbox_id: "a" });
    expect(mergeSandbox({ sandbox_id: "a" }, { sandbox_id: "a" })).toEqual({ sandbox_id: "a" });
    expect(mergeSandbox({ sandbox_id: "a" }, null)).toEqual({ sandbox_id: "a" });
    expect(() => mergeSandbox({ sandbox_id: "a" }, { sandbox_id: "b" })).toThrow("Conflicting sandbox state updates");
  });

  it("artifacts: concat + dedupe preserving order", () => {
    expect(mergeArtifacts(["/a", "/b"], ["/b", "/c", "/a", "/d"])).toEqual(["/a", "/b", "/c", "/d"]);
    expect(mergeArtifacts(null, null)).toEqual([]);
  });

  it("todos: null keeps, any list (even empty) replaces", () => {
    const t = [{ content: "x", status: "pending" as const }];
    expect(mergeTodos(t, null)).toBe(t);
    expect(mergeTodos(t, [])).toEqual([]);
    expect(keepIfNull({ objective: "g" }, null)).toEqual({ objective: "g" });
  });

  it("viewed_images: merges dicts, empty dict clears", () => {
    const a = { "/a.png": { mime_type: "image/png", size: 1 } };
    const b = { "/b.png": { mime_type: "image/png", size: 2 } };
    expect(Object.keys(mergeViewedImages(a, b))).toEqual(["/a.png", "/b.png"]);
    expect(mergeViewedImages(a, {})).toEqual({});
    expect(mergeViewedImages(a, null)).toBe(a);
  });

  it("promoted: empty keeps, new hash replaces, same hash unions in order", () => {
    const cur = { catalog_hash: "h1", names: ["a", "b"] };
    expect(mergePromoted(cur, { catalog_hash: "", names: [] })).toBe(cur);
    expect(mergePromoted(cur, { catalog_hash: "h2", names: ["z"] })).toEqual({ catalog_hash: "h2", names: ["z"] });
    expect(mergePromoted(cur, { catalog_hash: "h1", names: ["b", "c"] })).toEqual({ catalog_hash: "h1", names: ["a", "b", "c"] });
  });

  it("delegations: latest wins, keeps first created_at/run_id, never downgrades terminal, caps at 50", () => {
    const first = entry("1", "in_progress", { run_id: "r1" });
    const done = entry("1", "completed", { run_id: "r2", result_brief: "ok" });
    const merged = mergeDelegations([first], [done]);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ status: "completed", created_at: first.created_at, run_id: "r1", result_brief: "ok" });
    const again = mergeDelegations(merged, [entry("1", "in_progress")]);
    expect(again[0].status).toBe("completed");
    const many = mergeDelegations([], Array.from({ length: 60 }, (_, i) => entry(String(i), "completed")));
    expect(many).toHaveLength(50);
    expect(many[0].id).toBe("10");
  });

  it("skill_context: dedupe by path refreshing recency, keep last 8, collapse descriptions", () => {
    const mk = (p: string) => ({ name: p, path: p, description: `  a\n\n b  ${"x".repeat(600)}`, loaded_at: "t" });
    let cur = mergeSkillContext([], [mk("a"), mk("b")]);
    cur = mergeSkillContext(cur, [mk("a")]);
    expect(cur.map((e) => e.path)).toEqual(["b", "a"]);
    expect(cur[0].description.startsWith("a b x")).toBe(true);
    expect(cur[0].description.length).toBe(500);
    const many = mergeSkillContext([], Array.from({ length: 10 }, (_, i) => mk(String(i))));
    expect(many.map((e) => e.path)).toEqual(["2", "3", "4", "5", "6", "7", "8", "9"]);
  });

  it("schema applies updates with reducers and rejects unknown channels", () => {
    let s = initialState(threadStateSchema);
    expect(s.artifacts).toEqual([]);
    s = applyUpdate(threadStateSchema, s, { artifacts: ["/x"], title: "T" });
    s = applyUpdate(threadStateSchema, s, { artifacts: ["/x", "/y"], todos: undefined });
    expect(s.artifacts).toEqual(["/x", "/y"]);
    expect(s.title).toBe("T");
    expect(() => applyUpdate(threadStateSchema, s, { titel: "typo" })).toThrow(InvalidUpdateError);
    expect(() => applyUpdate(threadStateSchema, s, { titel: "typo" })).toThrow(/Unknown state channel 'titel'/);
  });
});

describe("initialState", () => {
  it("gives every call its own default values (two runs never share an array or object)", () => {
    const a = initialState(threadStateSchema);
    const b = initialState(threadStateSchema);
    expect(a).toEqual(b);
    for (const key of Object.keys(a) as Array<keyof typeof a>) {
      if (a[key] !== null && typeof a[key] === "object") expect(a[key], String(key)).not.toBe(b[key]);
    }
    (a.messages as unknown[]).push({ type: "human", content: "x" });
    expect(initialState(threadStateSchema).messages).toEqual([]);
  });
});
