import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandboxTools } from "../../../src/builtins/sandbox-tools";
import { LocalSandboxProvider, parseSandboxConfig, threadDirs } from "../../../src/sandbox";
import type { ToolDefinition } from "../../../src/tools";
import { bwrapAvailable, fakeToolRuntime, tempBase } from "../../sandbox/helpers";
import { BwrapSandboxProvider } from "../../../src/sandbox";

const b = tempBase("dftools-");
afterAll(() => b.cleanup());

function toolsFor(config: Record<string, unknown> = {}) {
  const provider = new LocalSandboxProvider(parseSandboxConfig(config), { baseDir: b.dir });
  const tools = createSandboxTools({ provider, config });
  const byName = new Map(tools.map((t) => [t.name, t] as [string, ToolDefinition]));
  const call = async (name: string, args: Record<string, unknown>, thread = "t1") => {
    const t = byName.get(name);
    if (!t) throw new Error(`no tool ${name}`);
    const parsed = t.schema.parse({ description: "test", ...args });
    const r = await t.execute(parsed, fakeToolRuntime(thread));
    return typeof r === "string" ? r : ((r as { content: string }).content as string);
  };
  return { tools, call, provider };
}

describe("sandbox tools (local provider)", () => {
  it("omits bash for local without allow_host_bash, every schema starts with description", () => {
    const { tools } = toolsFor();
    expect(tools.map((t) => t.name)).toEqual(["ls", "glob", "grep", "read_file", "write_file", "str_replace"]);
    for (const t of tools) expect(Object.keys((t.parameters as { properties: object }).properties)[0]).toBe("description");
    expect(toolsFor({ allow_host_bash: true }).tools[0].name).toBe("bash");
  });

  it("read_file: ranges, (empty), start beyond end, binary, truncation", async () => {
    const { call } = toolsFor({ read_file_output_max_chars: 200 });
    expect(await call("write_file", { path: "/mnt/user-data/workspace/a.txt", content: "l1\nl2\nl3\n" })).toBe("OK");
    expect(await call("read_file", { path: "/mnt/user-data/workspace/a.txt" })).toBe("l1\nl2\nl3\n");
    expect(await call("read_file", { path: "/mnt/user-data/workspace/a.txt", start_line: 2, end_line: 3 })).toBe("l2\nl3");
    expect(await call("read_file", { path: "/mnt/user-data/workspace/a.txt", start_line: 2 })).toBe("l2\nl3");
    expect(await call("read_file", { path: "/mnt/user-data/workspace/a.txt", start_line: 9 })).toBe("(start_line exceeds file length)");
    await call("write_file", { path: "/mnt/user-data/workspace/empty.txt", content: "" });
    expect(await call("read_file", { path: "/mnt/user-data/workspace/empty.txt" })).toBe("(empty)");
    writeFileSync(path.join(threadDirs(b.dir, "t1").workspace, "bin.dat"), Buffer.from([0x89, 0, 1, 2, 0xff]));
    expect(await call("read_file", { path: "/mnt/user-data/workspace/bin.dat" })).toMatch(/^Error: .*binary file.*bash.*view_image/);
    await call("write_file", { path: "/mnt/user-data/workspace/long.txt", content: "x".repeat(1000) });
    const long = await call("read_file", { path: "/mnt/user-data/workspace/long.txt" });
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long).toMatch(/\[truncated: showing first \d+ of 1000 chars\. Use start_line\/end_line/);
    expect(await call("read_file", { path: "/mnt/user-data/workspace/nope.txt" })).toBe("Error: File not found: /mnt/user-data/workspace/nope.txt");
    expect(await call("read_file", { path: "/mnt/user-data/../../etc/passwd" })).toBe("Error: Access denied: path traversal detected");
  });

  it("write_file: creates parents, append, 80 KiB cap with env override", async () => {
    const { call } = toolsFor();
    expect(await call("write_file", { path: "/mnt/user-data/outputs/x/y/z.md", content: "a" })).toBe("OK");
    expect(await call("write_file", { path: "/mnt/user-data/outputs/x/y/z.md", content: "b", append: true })).toBe("OK");
    expect(readFileSync(path.join(threadDirs(b.dir, "t1").outputs, "x/y/z.md"), "utf8")).toBe("ab");
    const big = "x".repeat(80 * 1024 + 1);
    expect(await call("write_file", { path: "/mnt/user-data/workspace/big.txt", content: big })).toMatch(/^Error: write_file content is 81921 bytes, over the 81920-byte limit/);
    expect(await call("write_file", { path: "/mnt/user-data/workspace/big.txt", content: big, append: true })).toBe("OK");
    process.env.DEERFLOW_WRITE_FILE_MAX_BYTES = "0";
    try {
      expect(await call("write_file", { path: "/mnt/user-data/workspace/big2.txt", content: big })).toBe("OK");
    } finally {
      delete process.env.DEERFLOW_WRITE_FILE_MAX_BYTES;
    }
  });

  it("str_replace: first occurrence, replace_all, not found, empty old_str, concurrent edits serialised", async () => {
    const { call } = toolsFor();
    const p = "/mnt/user-data/workspace/s.txt";
    await call("write_file", { path: p, content: "a-a-a" });
    expect(await call("str_replace", { path: p, old_str: "a", new_str: "b" })).toBe("OK");
    expect(await call("read_file", { path: p })).toBe("b-a-a");
    expect(await call("str_replace", { path: p, old_str: "a", new_str: "c", replace_all: true })).toBe("OK");
    expect(await call("read_file", { path: p })).toBe("b-c-c");
    expect(await call("str_replace", { path: p, old_str: "zzz", new_str: "q" })).toBe(`Error: String to replace not found in file: ${p}`);
    expect(await call("str_replace", { path: p, old_str: "", new_str: "q" })).toBe("OK");
    await call("write_file", { path: p, content: "1 2 3 4 5 6 7 8" });
    await Promise.all(["1", "2", "3", "4", "5", "6", "7", "8"].map((d) => call("str_replace", { path: p, old_str: d, new_str: `<${d}>` })));
    expect(await call("read_file", { path: p })).toBe("<1> <2> <3> <4> <5> <6> <7> <8>");
  });

  it("ls, glob (bound 1000), grep (bound 500) formats", async () => {
    const { call } = toolsFor({ ls_output_max_chars: 300 });
    for (let i = 0; i < 30; i++) await call("write_file", { path: `/mnt/user-data/workspace/g/f${String(i).padStart(2, "0")}.txt`, content: `hit ${i}\n` });
    const ls = await call("ls", { path: "/mnt/user-data/workspace/g" });
    expect(ls.startsWith("/mnt/user-data/workspace/g/f00.txt\n")).toBe(true);
    expect(ls).toMatch(/\[truncated: showing first \d+ of \d+ chars\. Use a more specific path/);
    expect(await call("ls", { path: "/mnt/user-data/uploads" })).toBe("(empty)");
    const glob = await call("glob", { pattern: "**/*.txt", path: "/mnt/user-data/workspace/g", max_results: 5 });
    expect(glob.split("\n").slice(0, 5)).toHaveLength(5);
    expect(glob).toMatch(/results truncated at 5 matches/);
    expect(await call("glob", { pattern: "*.none", path: "/mnt/user-data/workspace" })).toMatch(/^No files matched/);
    const grep = await call("grep", { pattern: "HIT 1\\d", path: "/mnt/user-data/workspace/g" });
    expect(grep.split("\n")).toHaveLength(10);
    expect(grep.split("\n")[0]).toBe("/mnt/user-data/workspace/g/f10.txt:1: hit 10");
    const capped = await call("grep", { pattern: "hit", path: "/mnt/user-data/workspace/g", max_results: 100000 });
    expect(capped.split("\n").filter((l) => l.includes(":1: hit"))).toHaveLength(30);
    expect(await call("grep", { pattern: "(", path: "/mnt/user-data/workspace/g" })).toMatch(/^Error: Invalid regular expression/);
  });

  it("bash (local): refusal when host bash is disabled", async () => {
    const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: b.dir });
    const [bash] = createSandboxTools({ provider, includeBash: true });
    const r = (await bash.execute({ description: "d", command: "echo hi" }, fakeToolRuntime("t1"))) as { content: string };
    expect(r.content).toMatch(/^Error: Host bash execution is disabled for LocalSandboxProvider because it is not a secure sandbox boundary/);
  });
});

describe.skipIf(!bwrapAvailable())("bash tool (bwrap)", () => {
  it("Exit Code, Std Error, middle truncation, timeout notice", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap", bash_output_max_chars: 300, bash_command_timeout: 1 }), { baseDir: b.dir });
    const [bash] = createSandboxTools({ provider, config: { bash_output_max_chars: 300, bash_command_timeout: 1 } });
    const run = async (command: string) =>
      (await bash.execute({ description: "d", command }, fakeToolRuntime("tb"))) as string;
    expect(await run("echo hi")).toBe("hi\n");
    expect(await run("true")).toBe("(no output)");
    expect(await run("echo out; echo err >&2; exit 3")).toBe("out\n\nStd Error:\nerr\n\nExit Code: 3");
    const long = await run("seq 1 2000");
    expect(long.length).toBeLessThanOrEqual(300);
    expect(long).toMatch(/^1\n2\n/);
    expect(long).toMatch(/\.\.\. \[middle truncated: \d+ chars skipped\] \.\.\./);
    expect(long.trimEnd().endsWith("2000")).toBe(true);
    expect(await run("pwd")).toBe("/mnt/user-data/workspace\n");
    const slow = await run("sleep 5");
    expect(slow).toMatch(/timed out after 1 seconds/);
    await provider.shutdown();
  });
});
