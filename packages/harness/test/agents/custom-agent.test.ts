import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createCustomAgent,
  customAgentExists,
  deleteCustomAgent,
  isLegacyOnlyAgent,
  listCustomAgents,
  loadCustomAgent,
  normalizeAgentName,
  updateCustomAgent,
} from "../../src/agents";
import { hasErrorCode } from "../../src/errors";

let base: string;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "custom-agent-"));
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe("custom agent storage", () => {
  it("creates config.yaml + SOUL.md under users/{uid}/agents/{name} with a lower-cased name", () => {
    const created = createCustomAgent(base, "u1", { name: "Code-Reviewer", description: "Reviews code", tool_groups: ["file:read"] }, "You review code.");
    expect(created).toMatchObject({ name: "code-reviewer", description: "Reviews code", tool_groups: ["file:read"], soul: "You review code." });
    const dir = path.join(base, "users", "u1", "agents", "code-reviewer");
    expect(fs.readFileSync(path.join(dir, "SOUL.md"), "utf8")).toBe("You review code.");
    expect(fs.readFileSync(path.join(dir, "config.yaml"), "utf8")).toContain("name: code-reviewer");
    expect(fs.readdirSync(dir).sort()).toEqual(["SOUL.md", "config.yaml"]); // no temp files left behind
  });

  it("rejects invalid names and duplicates (case-insensitively) with stable codes", () => {
    expect(() => normalizeAgentName("../etc")).toThrow(/Invalid agent name/);
    try {
      normalizeAgentName("a b");
    } catch (err) {
      expect(hasErrorCode(err, "agent_name_invalid")).toBe(true);
    }
    createCustomAgent(base, "u1", { name: "writer" }, "s");
    let code = "";
    try {
      createCustomAgent(base, "u1", { name: "WRITER" }, "s");
    } catch (err) {
      code = (err as { code: string }).code;
    }
    expect(code).toBe("agent_exists");
    expect(customAgentExists(base, "u1", "Writer")).toBe(true);
    expect(customAgentExists(base, "u2", "writer")).toBe(false);
  });

  it("lists per-user agents plus unshadowed legacy ones, sorted, skipping broken configs", () => {
    createCustomAgent(base, "u1", { name: "zeta" }, "z");
    createCustomAgent(base, "u1", { name: "alpha", description: "first" }, "a");
    fs.mkdirSync(path.join(base, "agents", "legacy"), { recursive: true });
    fs.writeFileSync(path.join(base, "agents", "legacy", "config.yaml"), "name: legacy\ndescription: old\n");
    fs.mkdirSync(path.join(base, "users", "u1", "agents", "broken"), { recursive: true });
    fs.writeFileSync(path.join(base, "users", "u1", "agents", "broken", "config.yaml"), "- not: a mapping\n");
    const warnings: string[] = [];
    const names = listCustomAgents(base, "u1", (m) => warnings.push(m)).map((a) => a.name);
    expect(names).toEqual(["alpha", "legacy", "zeta"]);
    expect(warnings.join()).toContain("broken");
    expect(isLegacyOnlyAgent(base, "u1", "legacy")).toBe(true);
    expect(isLegacyOnlyAgent(base, "u1", "alpha")).toBe(false);
  });

  it("updates config and soul independently and keeps hand-written fields only when the caller passes them", () => {
    createCustomAgent(base, "u1", { name: "bot", description: "d", github: { repo: "x/y" } }, "old soul");
    updateCustomAgent(base, "u1", "bot", null, "new soul");
    expect(loadCustomAgent(base, "u1", "bot")).toMatchObject({ soul: "new soul", description: "d", github: { repo: "x/y" } });
    updateCustomAgent(base, "u1", "bot", { name: "bot", description: "d2", model: "m1" }, null);
    expect(loadCustomAgent(base, "u1", "bot")).toMatchObject({ soul: "new soul", description: "d2", model: "m1" });
  });

  it("deletes only per-user agents with a config; reports legacy, memory-only and missing", () => {
    createCustomAgent(base, "u1", { name: "gone" }, "s");
    expect(deleteCustomAgent(base, "u1", "gone")).toBe("deleted");
    expect(fs.existsSync(path.join(base, "users", "u1", "agents", "gone"))).toBe(false);
    expect(deleteCustomAgent(base, "u1", "gone")).toBe("missing");
    fs.mkdirSync(path.join(base, "agents", "shared"), { recursive: true });
    fs.writeFileSync(path.join(base, "agents", "shared", "config.yaml"), "name: shared\n");
    expect(deleteCustomAgent(base, "u1", "shared")).toBe("legacy");
    fs.mkdirSync(path.join(base, "users", "u1", "agents", "mem"), { recursive: true });
    fs.writeFileSync(path.join(base, "users", "u1", "agents", "mem", "memory.json"), "{}");
    expect(deleteCustomAgent(base, "u1", "mem")).toBe("not-custom-agent");
    expect(fs.existsSync(path.join(base, "users", "u1", "agents", "mem", "memory.json"))).toBe(true);
  });
});
