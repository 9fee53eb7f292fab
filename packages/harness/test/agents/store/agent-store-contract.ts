import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { userAgentDir } from "../../../src/agents";
import type { AgentStore } from "../../../src/agents";

/** One store under test: the store, the runtime home it keeps agents' memory in, and its cleanup. */
export interface StoreUnderTest {
  store: AgentStore;
  baseDir: string;
  close(): Promise<void>;
}

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (err: unknown) => (err as { code?: string }).code,
  );

/**
 * The behaviour every `AgentStore` shares (file, SQLite, PostgreSQL): the
 * routes, the tools and the lead agent factory rely on exactly this.
 */
export function describeAgentStoreContract(label: string, open: () => Promise<StoreUnderTest>): void {
  describe(`AgentStore contract: ${label}`, () => {
    const opened: StoreUnderTest[] = [];
    const fresh = async () => {
      const s = await open();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      while (opened.length) await opened.pop()!.close();
    });

    it("creates an agent and reads it back as written (name lower-cased, extra fields kept, soul trimmed)", async () => {
      const { store } = await fresh();
      const created = await store.create(
        "u1",
        { name: "Code-Reviewer", description: "Reviews diffs", model: "basic", tool_groups: ["web"], skills: [], model_settings: { temperature: 0.2 }, thinking_enabled: false, reasoning_effort: "high", github: { repo: "o/r" } },
        "  You review code.\n",
      );
      const read = await store.get("u1", "CODE-reviewer");
      expect(read).toEqual(created);
      expect(read).toEqual({
        name: "code-reviewer",
        description: "Reviews diffs",
        model: "basic",
        tool_groups: ["web"],
        skills: [],
        model_settings: { temperature: 0.2 },
        thinking_enabled: false,
        reasoning_effort: "high",
        github: { repo: "o/r" },
        soul: "You review code.",
      });
    });

    it("an agent without description or soul reads back with description '' and soul null", async () => {
      const { store } = await fresh();
      await store.create("u1", { name: "bare" }, "");
      expect(await store.get("u1", "bare")).toEqual({ name: "bare", description: "", soul: null });
    });

    it("refuses a taken name with agent_exists, and bad names with agent_name_invalid", async () => {
      const { store } = await fresh();
      await store.create("u1", { name: "taken" }, "soul");
      expect(await codeOf(store.create("u1", { name: "TAKEN" }, "other"))).toBe("agent_exists");
      expect((await store.get("u1", "taken")).soul).toBe("soul");
      expect(await codeOf(store.create("u1", { name: "no/slash" }, "x"))).toBe("agent_name_invalid");
      expect(await codeOf(store.get("u1", "../x"))).toBe("agent_name_invalid");
      // another user may use the name
      await store.create("u2", { name: "taken" }, "u2's");
      expect((await store.get("u2", "taken")).soul).toBe("u2's");
    });

    it("get of a missing agent is agent_not_found; exists follows create and delete", async () => {
      const { store } = await fresh();
      expect(await codeOf(store.get("u1", "ghost"))).toBe("agent_not_found");
      expect(await store.exists("u1", "ghost")).toBe(false);
      await store.create("u1", { name: "ghost" }, "boo");
      expect(await store.exists("u1", "Ghost")).toBe(true);
      expect(await store.exists("u2", "ghost")).toBe(false);
      expect(await store.delete("u1", "ghost")).toBe("deleted");
      expect(await store.exists("u1", "ghost")).toBe(false);
      expect(await codeOf(store.get("u1", "ghost"))).toBe("agent_not_found");
    });

    it("lists one user's agents sorted by name", async () => {
      const { store } = await fresh();
      for (const n of ["zeta", "alpha", "m-1", "m1"]) await store.create("u1", { name: n, description: n }, `soul ${n}`);
      await store.create("u2", { name: "other" }, "x");
      const list = await store.list("u1");
      expect(list.map((a) => a.name)).toEqual(["alpha", "m-1", "m1", "zeta"].sort((a, b) => a.localeCompare(b)));
      expect(list[0]).toEqual({ name: "alpha", description: "alpha", soul: "soul alpha" });
      expect((await store.list("u3")).length).toBe(0);
    });

    it("update replaces only the given part: config keeps the soul, soul keeps the config; it creates a missing agent", async () => {
      const { store } = await fresh();
      await store.create("u1", { name: "a", description: "first", skills: ["x"] }, "old soul");
      await store.update("u1", "a", { name: "a", description: "second" }, null);
      expect(await store.get("u1", "a")).toEqual({ name: "a", description: "second", soul: "old soul" });
      await store.update("u1", "A", null, "new soul");
      expect(await store.get("u1", "a")).toEqual({ name: "a", description: "second", soul: "new soul" });
      const made = await store.update("u1", "fresh", { name: "fresh", description: "made by setup_agent", skills: ["s"] }, "hello");
      expect(made).toEqual({ name: "fresh", description: "made by setup_agent", skills: ["s"], soul: "hello" });
      const soulOnly = await store.update("u1", "soul-only", null, "just a soul");
      expect(soulOnly).toEqual({ name: "soul-only", description: "", soul: "just a soul" });
    });

    it("delete removes the agent's memory directory; a directory without an agent is kept as not-custom-agent", async () => {
      const { store, baseDir } = await fresh();
      await store.create("u1", { name: "mem" }, "s");
      const dir = userAgentDir(baseDir, "u1", "mem");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "memory.json"), "{}");
      expect(await store.delete("u1", "mem")).toBe("deleted");
      expect(existsSync(dir)).toBe(false);
      expect(await store.delete("u1", "mem")).toBe("missing");
      const memoryOnly = userAgentDir(baseDir, "u1", "memory-only");
      mkdirSync(memoryOnly, { recursive: true });
      writeFileSync(join(memoryOnly, "memory.json"), "{}");
      expect(await store.delete("u1", "memory-only")).toBe("not-custom-agent");
      expect(existsSync(join(memoryOnly, "memory.json"))).toBe(true);
    });

    it("the signature changes when the agent changes and is stable otherwise", async () => {
      const { store } = await fresh();
      const missing = await store.signature("u1", "sig");
      expect(await store.signature("u1", "sig")).toBe(missing);
      await store.create("u1", { name: "sig", description: "one" }, "s");
      const first = await store.signature("u1", "sig");
      expect(first).not.toBe(missing);
      expect(await store.signature("u1", "sig")).toBe(first);
      await store.update("u1", "sig", { name: "sig", description: "two, longer" }, null);
      expect(await store.signature("u1", "sig")).not.toBe(first);
      expect(await store.signature("u1", "not a name")).toBe("");
    });

    it("of many concurrent creates of one name exactly one wins, the others get agent_exists", async () => {
      const { store } = await fresh();
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.create("u1", { name: "race", description: `#${i}` }, `soul ${i}`)));
      const won = outcomes.filter((o) => o.status === "fulfilled");
      expect(won).toHaveLength(1);
      for (const o of outcomes) if (o.status === "rejected") expect((o.reason as { code?: string }).code).toBe("agent_exists");
      const winner = (won[0] as PromiseFulfilledResult<{ description?: string; soul?: string | null }>).value;
      expect(await store.get("u1", "race")).toMatchObject({ description: winner.description, soul: winner.soul });
    });
  });
}
