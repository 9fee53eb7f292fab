import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assembleConfiguredTools, DEFAULT_TOOL_ENTRIES, toolEntriesOrDefault } from "../../src/agents/tool-assembly";
import { parseAppConfigText } from "../../src/config";
import { LocalSandboxProvider, parseSandboxConfig } from "../../src/sandbox";

const base = mkdtempSync(path.join(os.tmpdir(), "df-tools-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const sandboxConfig = parseSandboxConfig({ use: "local" });
const sandbox = { provider: new LocalSandboxProvider(sandboxConfig, { baseDir: base }), config: sandboxConfig };

describe("DEFAULT_TOOL_ENTRIES (the tool set of a config without a `tools:` key)", () => {
  it("are DeerFlow's sandbox tool entries with their groups", () => {
    expect(DEFAULT_TOOL_ENTRIES.map((e) => [e.name, e.group, e.use])).toEqual([
      ["ls", "file:read", "deerflow.sandbox.tools:ls_tool"],
      ["read_file", "file:read", "deerflow.sandbox.tools:read_file_tool"],
      ["glob", "file:read", "deerflow.sandbox.tools:glob_tool"],
      ["grep", "file:read", "deerflow.sandbox.tools:grep_tool"],
      ["write_file", "file:write", "deerflow.sandbox.tools:write_file_tool"],
      ["str_replace", "file:write", "deerflow.sandbox.tools:str_replace_tool"],
      ["bash", "bash", "deerflow.sandbox.tools:bash_tool"],
    ]);
    expect(Object.isFrozen(DEFAULT_TOOL_ENTRIES)).toBe(true);
  });

  it("assemble into the sandbox tools; bash only when allowed; groups filter them", () => {
    const warnings: string[] = [];
    const all = assembleConfiguredTools(DEFAULT_TOOL_ENTRIES, { sandbox, bashAllowed: true, warn: (m) => warnings.push(m) });
    expect(all.map((t) => t.name)).toEqual(["ls", "read_file", "glob", "grep", "write_file", "str_replace", "bash"]);
    expect(warnings).toEqual([]);
    const noBash = assembleConfiguredTools(DEFAULT_TOOL_ENTRIES, { sandbox, bashAllowed: false, warn: () => {} });
    expect(noBash.map((t) => t.name)).not.toContain("bash");
    const readOnly = assembleConfiguredTools(DEFAULT_TOOL_ENTRIES, { sandbox, groups: ["file:read"], bashAllowed: true, warn: () => {} });
    expect(readOnly.map((t) => t.name)).toEqual(["ls", "read_file", "glob", "grep"]);
  });

  it("apply only when the key is absent: an explicit `tools: []` means none", () => {
    expect(toolEntriesOrDefault(undefined)).toBe(DEFAULT_TOOL_ENTRIES);
    expect(toolEntriesOrDefault(null)).toBe(DEFAULT_TOOL_ENTRIES);
    expect(toolEntriesOrDefault([])).toEqual([]);
    const explicit = parseAppConfigText("tools: []\n").config.tools;
    expect(assembleConfiguredTools(toolEntriesOrDefault(explicit), { sandbox, bashAllowed: true, warn: () => {} })).toEqual([]);
  });
});
