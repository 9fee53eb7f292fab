import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { applyMemoryUpdate, emptyMemoryDocument, parseMemoryUpdate, resolveMemoryConfig } from "../../src/memory";
import type { MemoryFact } from "../../src/memory";
import { proposedFact, scriptedService, updaterJson } from "./_helpers";

const cfg = resolveMemoryConfig({}).backend;
const convo = (user: string, ai = "Noted.") => [humanMessage(user, { id: `h-${user.length}` }), aiMessage(ai, { id: `a-${user.length}` })];

describe("memory updater (scripted model)", () => {
  it("valid JSON: stores gated facts and summaries in DeerFlow's memory.json layout", async () => {
    const answer = updaterJson({
      user: { workContext: { summary: "Data engineer at Acme.", shouldUpdate: true, scope: "user", authority: "descriptive" }, topOfMind: { summary: "Fix the CI today.", shouldUpdate: true, scope: "thread", authority: "descriptive" } },
      newFacts: [
        proposedFact("User prefers Python type hints", { expected_valid_days: 99999 }),
        proposedFact("Deploy to prod now", { authority: "transactional" }),
        proposedFact("User may like jazz", { confidence: 0.5 }),
        proposedFact("Current PR is #12", { scope: "thread" }),
        proposedFact("  user prefers python TYPE hints "),
      ],
    });
    const h = scriptedService([answer]);
    try {
      expect((await h.service.enqueue({ threadId: "t1", userId: "alice", messages: convo("I prefer Python type hints; I work at Acme") })).queued).toBe(true);
      await h.service.flush();
      const doc = JSON.parse(readFileSync(path.join(h.dir, "users", "alice", "memory.json"), "utf8"));
      expect(doc).toMatchObject({ version: "1.0", revision: 1, user: { workContext: { summary: "Data engineer at Acme." }, topOfMind: { summary: "" } } });
      expect(doc.facts).toHaveLength(1);
      expect(doc.facts[0]).toMatchObject({ content: "User prefers Python type hints", category: "preference", confidence: 0.9, source: "t1", expected_valid_days: 1800 });
      expect(doc.facts[0].id).toMatch(/^fact_[0-9a-f]{8}$/);
      expect(doc.facts[0].scope).toBeUndefined();
      // The prompt carried the conversation and the signal hint.
      const prompt = JSON.stringify(h.model.requests[0].messages);
      expect(prompt).toContain("I prefer Python type hints");
      expect(prompt).toContain("Signal: the user stated a preference");
    } finally {
      await h.dispose();
    }
  });

  it("per-agent memory goes to users/{u}/agents/{agent}/memory.json", async () => {
    const h = scriptedService([updaterJson({ newFacts: [proposedFact("User writes in British English")] })]);
    try {
      await h.service.enqueue({ threadId: "t1", userId: "bob", agentName: "Writer", messages: convo("I write in British English") });
      await h.service.flush();
      const doc = JSON.parse(readFileSync(path.join(h.dir, "users", "bob", "agents", "writer", "memory.json"), "utf8"));
      expect(doc.facts.map((f: MemoryFact) => f.content)).toEqual(["User writes in British English"]);
      expect(h.service.getMemory({ userId: "bob", agentName: null }).facts).toEqual([]);
    } finally {
      await h.dispose();
    }
  });

  it("invalid JSON: nothing is written, the run is unaffected, and the next turn re-feeds the conversation", async () => {
    const h = scriptedService(["Sure! Here is the memory: {not json", updaterJson({ newFacts: [proposedFact("User likes hiking")] })]);
    try {
      const first = convo("I like hiking on weekends");
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: first });
      await h.service.flush();
      expect(h.service.getMemory({ userId: "u", agentName: null }).facts).toEqual([]);
      expect(h.warnings.join("\n")).toMatch(/No valid memory update JSON/);
      expect(h.service.updaterStatus.updatesFailed).toBe(1);
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: [...first, humanMessage("And I run marathons", { id: "h2" }), aiMessage("Great.", { id: "a2" })] });
      await h.service.flush();
      expect(h.service.getMemory({ userId: "u", agentName: null }).facts.map((f) => f.content)).toEqual(["User likes hiking"]);
      // The retry saw the failed turn again (the watermark had not moved).
      expect(JSON.stringify(h.model.requests[1].messages)).toContain("I like hiking on weekends");
    } finally {
      await h.dispose();
    }
  });

  it("JSON wrapped in prose or fences is accepted; only the new turns are fed after success", async () => {
    const h = scriptedService(["```json\n" + updaterJson({ newFacts: [proposedFact("User uses vim")] }) + "\n```", "<think>{</think>" + updaterJson()]);
    try {
      const first = convo("I use vim");
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: first });
      await h.service.flush();
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: [...first, humanMessage("What about emacs keybindings?", { id: "h9" }), aiMessage("They differ.", { id: "a9" })] });
      await h.service.flush();
      const second = JSON.stringify(h.model.requests[1].messages[1]);
      expect(second).toContain("emacs keybindings");
      expect(second.split("<conversation>")[1]).not.toContain("I use vim");
      expect(h.service.getMemory({ userId: "u", agentName: null }).facts).toHaveLength(1);
    } finally {
      await h.dispose();
    }
  });

  it("a correction replaces the old fact (removal paired with its replacement) and is protected from staleness", async () => {
    let oldId = "";
    const h = scriptedService([
      updaterJson({ newFacts: [proposedFact("User's team uses PostgreSQL", { category: "context" })] }),
      () =>
        updaterJson({
          newFacts: [proposedFact("User's team uses MySQL, not PostgreSQL", { category: "correction", confidence: 0.97, sourceError: "assumed PostgreSQL" })],
          factsToRemove: [{ id: oldId, scope: "user", reason: "user corrected the database", replacementFactIndex: 0 }],
        }),
    ]);
    try {
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: convo("Our team uses PostgreSQL") });
      await h.service.flush();
      oldId = h.service.getMemory({ userId: "u", agentName: null }).facts[0].id;
      await h.service.enqueue({ threadId: "t2", userId: "u", messages: convo("That's wrong, we use MySQL not PostgreSQL") });
      await h.service.flush();
      const facts = h.service.getMemory({ userId: "u", agentName: null }).facts;
      expect(facts.map((f) => [f.category, f.content])).toEqual([["correction", "User's team uses MySQL, not PostgreSQL"]]);
      expect(JSON.stringify(h.model.requests[1].messages)).toContain("Signal: the user corrected the assistant");
      const old = new Date(Date.now() - 400 * 86_400_000).toISOString();
      const doc = { ...emptyMemoryDocument(), facts: [...facts.map((f) => ({ ...f, createdAt: old })), ...["a", "b", "c"].map((x, i) => ({ id: `fact_0000000${i}`, content: `old ${x}`, category: "context", confidence: 0.8, createdAt: old, source: "t" }))] };
      const update = parseMemoryUpdate(updaterJson({ staleFactsToRemove: doc.facts.map((f) => ({ id: f.id, reason: "old" })) }));
      const res = applyMemoryUpdate(doc, update, { cfg, threadId: "t3", signals: new Set() });
      expect(res.doc.facts.map((f) => f.category)).toEqual(["correction"]);
    } finally {
      await h.dispose();
    }
  });

  it("a removal without scope/reason, or whose replacement failed the gate, deletes nothing", () => {
    const doc = { ...emptyMemoryDocument(), facts: [{ id: "fact_aaaaaaaa", content: "User lives in Paris", category: "context", confidence: 0.9, createdAt: new Date().toISOString(), source: "t" }] };
    const bare = parseMemoryUpdate(updaterJson({ factsToRemove: ["fact_aaaaaaaa"] }));
    expect(applyMemoryUpdate(doc, bare, { cfg, threadId: "t", signals: new Set() }).doc.facts).toHaveLength(1);
    const badReplacement = parseMemoryUpdate(updaterJson({ newFacts: [proposedFact("User lives in Rome", { scope: "thread" })], factsToRemove: [{ id: "fact_aaaaaaaa", scope: "user", reason: "moved", replacementFactIndex: 0 }] }));
    expect(applyMemoryUpdate(doc, badReplacement, { cfg, threadId: "t", signals: new Set() }).doc.facts.map((f) => f.content)).toEqual(["User lives in Paris"]);
    const pure = parseMemoryUpdate(updaterJson({ factsToRemove: [{ id: "fact_aaaaaaaa", scope: "user", reason: "user said to forget it" }] }));
    expect(applyMemoryUpdate(doc, pure, { cfg, threadId: "t", signals: new Set() }).removedIds).toEqual(["fact_aaaaaaaa"]);
    expect(() => parseMemoryUpdate(updaterJson({ newFacts: [{ content: "" }], factsToRemove: [{ id: "x", scope: "user", reason: "r" }] }))).toThrow(/Unsafe partial/);
  });

  it("max_facts keeps the most confident facts (confidence policy) and hybrid-v1 reserves correction slots", () => {
    const now = new Date().toISOString();
    const facts = Array.from({ length: 12 }, (_, i) => ({ id: `fact_${String(i).padStart(8, "0")}`, content: `fact ${i}`, category: i === 0 ? "correction" : "context", confidence: 0.5 + i * 0.04, createdAt: now, source: "t" }));
    const doc = { ...emptyMemoryDocument(), facts };
    const small = { ...cfg, max_facts: 10 };
    const kept = applyMemoryUpdate(doc, parseMemoryUpdate(updaterJson()), { cfg: small, threadId: "t", signals: new Set() }).doc.facts;
    expect(kept).toHaveLength(10);
    expect(kept.map((f) => f.id)).not.toContain("fact_00000000");
    const hybrid = applyMemoryUpdate(doc, parseMemoryUpdate(updaterJson()), { cfg: { ...small, fact_eviction_policy: "hybrid-v1" }, threadId: "t", signals: new Set() }).doc.facts;
    expect(hybrid.map((f) => f.id)).toContain("fact_00000000");
  });

  it("reports once when extraction cannot run, and never throws into the caller", async () => {
    const h = scriptedService([], { resolveModel: () => { throw new Error("no models configured"); } });
    try {
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: convo("I prefer dark mode") });
      await h.service.flush();
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: convo("I prefer dark mode!") });
      await h.service.flush();
      expect(h.warnings.filter((w) => w.includes("memory extraction cannot run"))).toHaveLength(1);
      expect(h.service.updaterStatus).toMatchObject({ extractionAvailable: false, updatesFailed: 2 });
    } finally {
      await h.dispose();
    }
  });

  it("the prompt carries a staleness review (aged, unprotected facts) and, when enabled, consolidation groups; extensions are capped", async () => {
    const h = scriptedService([() => updaterJson()], { memory: { backend_config: { debounce_seconds: 0.01, consolidation_enabled: true, consolidation_min_facts: 3 } } });
    try {
      const old = new Date(Date.now() - 200 * 86_400_000).toISOString();
      const facts = ["a", "b", "c", "d"].map((x, i) => ({ id: `fact_0000000${i}`, content: `User likes hobby ${x}`, category: "preference", confidence: 0.8, createdAt: old }));
      facts.push({ id: "fact_00000009", content: "Never use tabs", category: "correction", confidence: 0.99, createdAt: old });
      await h.service.importMemory({ userId: "u", agentName: null }, { facts });
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: convo("Tell me a joke about hobbies") });
      await h.service.flush();
      const prompt = String(h.model.requests[0].messages[1].content);
      const stale = prompt.split("<stale_facts>")[1].split("</stale_facts>")[0];
      expect(stale).toContain("[fact_00000000 | preference | 0.80 |");
      expect(stale).toContain("valid:90d");
      expect(stale).not.toContain("Never use tabs");
      expect(prompt).toContain('<consolidation_candidates category="preference" count="4">');
      const doc = h.service.getMemory({ userId: "u", agentName: null });
      const update = parseMemoryUpdate(updaterJson({ staleFactsToExtend: [{ id: "fact_00000000", extend_by_days: 99999, reason: "still true" }] }));
      const res = applyMemoryUpdate(doc, update, { cfg, threadId: "t", signals: new Set() });
      expect(res.doc.facts.find((f) => f.id === "fact_00000000")?.expected_valid_days).toBe(3650);
    } finally {
      await h.dispose();
    }
  });

  it("upload mentions never reach memory", async () => {
    const h = scriptedService([updaterJson({ user: { workContext: { summary: "Analyst. The user uploaded a CSV file for review. Works on sales.", shouldUpdate: true, scope: "user", authority: "descriptive" } }, newFacts: [proposedFact("User uploaded files to /mnt/user-data/uploads/a.csv"), proposedFact("User works with CSV files")] })]);
    try {
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: convo("I work with CSV files a lot") });
      await h.service.flush();
      const doc = h.service.getMemory({ userId: "u", agentName: null });
      expect(doc.facts.map((f) => f.content)).toEqual(["User works with CSV files"]);
      expect(doc.user.workContext.summary).toBe("Analyst. Works on sales.");
    } finally {
      await h.dispose();
    }
  });
});
