import { describe, expect, it } from "vitest";
import { createEmbedder } from "../../src/memory";
import { hashedEmbedding, startScriptedLLMServer } from "../../src/testing";
import { scriptedService } from "./_helpers";

// A test vocabulary of "meanings": words of one concept share a dimension.
const CONCEPTS: string[][] = [["cat", "feline", "kitten"], ["food", "eat", "diet", "salmon", "fish"], ["car", "vehicle", "drive"], ["music", "song", "jazz"]];
function conceptVector(text: string): number[] {
  const v = new Array(CONCEPTS.length + 1).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const i = CONCEPTS.findIndex((c) => c.includes(w));
    v[i === -1 ? CONCEPTS.length : i] += i === -1 ? 0.05 : 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x: number) => x / n);
}

describe("hybrid ranking with embeddings (AI SDK embedding model against the scripted /v1/embeddings)", () => {
  it("the scripted server speaks OpenAI's embeddings wire format deterministically", async () => {
    const server = await startScriptedLLMServer({ script: [] });
    try {
      const res = await fetch(`${server.url}/v1/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "e", input: ["red apples", "red apple"] }) });
      const body = (await res.json()) as { data: Array<{ index: number; embedding: number[] }> };
      expect(body.data.map((d) => d.index)).toEqual([0, 1]);
      expect(body.data[0].embedding).toEqual(body.data[1].embedding);
      expect(body.data[0].embedding).toEqual(hashedEmbedding("red apples"));
      expect((await fetch(`${server.url}/v1/embeddings`, { method: "POST", body: "{}" })).status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it("a fact that shares no word with the question is found by meaning", async () => {
    let calls = 0;
    const server = await startScriptedLLMServer({ script: [], embed: (t) => (calls++, conceptVector(t)) });
    const h = scriptedService([], { memory: { backend_config: { max_facts: 1000, embedding: { model: "text-embedding-3-small", base_url: `${server.url}/v1`, api_key: "sk-test" } } } });
    try {
      expect(h.service.embedder?.model).toBe("text-embedding-3-small");
      const scope = { userId: "u", agentName: null };
      const facts = Array.from({ length: 200 }, (_, i) => ({ id: `fact_${String(i).padStart(8, "0")}`, content: `User drives a blue vehicle number ${i}`, category: "context", confidence: 0.95 }));
      facts.push({ id: "fact_target01", content: "Kitten Mochi only eats salmon", category: "context", confidence: 0.7 });
      await h.service.importMemory(scope, { facts });
      await h.service.flush(); // embeddings are computed in the background
      const lexicalOnly = await (async () => {
        const l = scriptedService([], { memory: { backend_config: { max_facts: 1000, max_injection_tokens: 300 } } });
        await l.service.importMemory(scope, { facts });
        const r = await l.service.recall(scope, "What does my feline like for dinner?");
        await l.dispose();
        return r;
      })();
      expect(lexicalOnly.report.factIds).not.toContain("fact_target01");
      const hybrid = await h.service.recall(scope, "What does my feline like for dinner?");
      expect(hybrid.report.factIds[0]).toBe("fact_target01");
      expect(calls).toBeGreaterThanOrEqual(2);
    } finally {
      await h.dispose();
      await server.close();
    }
  });

  it("a failing embedding endpoint degrades to lexical ranking with a warning", async () => {
    const h = scriptedService([], { memory: { backend_config: { embedding: { model: "e", base_url: "http://127.0.0.1:9/v1", api_key: "x" } } } });
    try {
      const scope = { userId: "u", agentName: null };
      await h.service.importMemory(scope, { facts: [{ id: "fact_00000001", content: "User's cat is Mochi", confidence: 0.9 }] });
      await h.service.flush();
      const r = await h.service.recall(scope, "What is my cat's name?");
      expect(r.report.factIds).toEqual(["fact_00000001"]);
      expect(h.warnings.some((w) => w.includes("embedding"))).toBe(true);
    } finally {
      await h.dispose();
    }
  });

  it("an embedding model named in models: is resolved by name", () => {
    const e = createEmbedder("emb", [{ name: "emb", model: "text-embedding-3-large", base_url: "http://127.0.0.1:1/v1", api_key: "k" }]);
    expect(e.model).toBe("text-embedding-3-large");
  });
});
