import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { createDynamicContextMiddleware, MEMORY_REPORT_KEY } from "../../src/middlewares";
import { apply, leadRuntime, leadState } from "../middlewares/_fixtures-lead";
import { proposedFact, scriptedService, updaterJson } from "./_helpers";

const scope = { userId: "u", agentName: null };

describe("memory tiers 2 and 3", () => {
  it("tier 2: a finished thread's summary is recalled by relevance in a new thread, not in its own", async () => {
    const h = scriptedService([
      updaterJson({ threadSummary: "Planned a two-week rail trip through Japan: Tokyo, Kyoto, Hiroshima; JR pass bought." }),
      updaterJson({ threadSummary: "Debugged a memory leak in the Node.js ingestion worker." }),
    ]);
    try {
      await h.service.enqueue({ threadId: "trip", userId: "u", messages: [humanMessage("Help me plan a rail trip in Japan", { id: "h1" }), aiMessage("Here is a plan.", { id: "a1" })] });
      await h.service.enqueue({ threadId: "leak", userId: "u", messages: [humanMessage("My node worker leaks memory", { id: "h2" }), aiMessage("Check the cache.", { id: "a2" })] });
      await h.service.flush();
      expect((await h.service.threadSummaries(scope)).map((s) => s.threadId).sort()).toEqual(["leak", "trip"]);
      const other = await h.service.recall(scope, "Which cities did we pick for the Japan rail trip?", { threadId: "new" });
      expect(other.report.threadSummaryIds).toEqual(["trip"]);
      expect(other.text).toContain("Related conversations:\n- (");
      expect(other.text).toContain("Tokyo, Kyoto, Hiroshima");
      const own = await h.service.recall(scope, "Which cities did we pick for the Japan rail trip?", { threadId: "trip" });
      expect(own.report.threadSummaryIds).toEqual([]);
      // Deleting a thread forgets its summary and drops its pending update.
      await h.service.enqueue({ threadId: "trip", userId: "u", messages: [humanMessage("One more stop: Nara", { id: "h3" }), aiMessage("Added.", { id: "a3" })] });
      expect(h.service.updaterStatus.pending).toBe(1);
      await h.service.forgetThread("trip", "u");
      expect(h.service.updaterStatus.pending).toBe(0);
      expect((await h.service.threadSummaries(scope)).map((s) => s.threadId)).toEqual(["leak"]);
    } finally {
      await h.dispose();
    }
  });

  it("tier 3: triples are stored, recalled one hop from entities named in the question, and a correction supersedes", async () => {
    const h = scriptedService([
      updaterJson({
        relations: [
          { subject: "Alice", relation: "manages", object: "Project Falcon" },
          { subject: "Project Falcon", relation: "uses", object: "Kafka" },
          { subject: "user", relation: "reports to", object: "Alice" },
          { subject: "Bob", relation: "owns", object: "billing service" },
        ],
      }),
      updaterJson({ relations: [{ subject: "Project Falcon", relation: "uses", object: "Pulsar", correction: true }] }),
    ]);
    try {
      await h.service.enqueue({ threadId: "t1", userId: "u", messages: [humanMessage("Alice manages Project Falcon, which uses Kafka. I report to Alice.", { id: "h1" }), aiMessage("Got it.", { id: "a1" })] });
      await h.service.flush();
      const r1 = await h.service.recall(scope, "What does Project Falcon run on?");
      expect(r1.text).toContain("Relations:");
      expect(r1.text).toContain("- Project Falcon | uses | Kafka");
      expect(r1.text).toContain("- Alice | manages | Project Falcon");
      expect(r1.text).not.toContain("billing service");
      await h.service.enqueue({ threadId: "t2", userId: "u", messages: [humanMessage("Correction: Falcon moved from Kafka to Pulsar", { id: "h2" }), aiMessage("Updated.", { id: "a2" })] });
      await h.service.flush();
      const r2 = await h.service.recall(scope, "What does Project Falcon run on?");
      expect(r2.text).toContain("- Project Falcon | uses | Pulsar");
      expect(r2.text).not.toContain("Kafka");
      const all = await h.service.relations(scope);
      const kafka = all.find((t) => t.object === "Kafka")!;
      const pulsar = all.find((t) => t.object === "Pulsar")!;
      expect(kafka.supersededBy).toBe(pulsar.id);
      expect(pulsar.supersededBy).toBeNull();
      expect(r2.report.tripleIds).toContain(pulsar.id);
    } finally {
      await h.dispose();
    }
  });

  it("through DynamicContext: the current message is the query, the block is a hidden role:user message, and the run records what was injected", async () => {
    const h = scriptedService([updaterJson({ newFacts: [proposedFact("User's dog is a beagle named Pixel", { category: "context" })] })]);
    try {
      await h.service.enqueue({ threadId: "t0", userId: "u1", messages: [humanMessage("My dog Pixel is a beagle", { id: "h" }), aiMessage("Cute!", { id: "a" })] });
      await h.service.flush();
      const mw = createDynamicContextMiddleware({ memoryProvider: h.service.provider });
      const rt = leadRuntime({ threadId: "t9" });
      const st = leadState([humanMessage("What breed is my dog?", { id: "m1" })]);
      const out = apply(st, await mw.beforeAgent!(st, rt));
      const mem = out.messages[1];
      expect(mem).toMatchObject({ type: "human", id: "m1__memory", additional_kwargs: { hide_from_ui: true } });
      expect(mem.content).toContain("<memory>\nFacts:\n- [context | 0.90] User's dog is a beagle named Pixel\n</memory>");
      const id = h.service.getMemory({ userId: "u1", agentName: null }).facts[0].id;
      expect((mem.additional_kwargs[MEMORY_REPORT_KEY] as { factIds: string[] }).factIds).toEqual([id]);
      expect(rt.outcome.snapshot().reports.memory).toMatchObject({ factIds: [id], facts: [{ id, content: "User's dog is a beagle named Pixel", relevant: true }] });
    } finally {
      await h.dispose();
    }
  });
});
