/**
 * Progressive loading through the real sandbox tools: the model reads
 * SKILL.md with read_file, then runs and reads what it references with
 * bash (bubblewrap), while the view stays read-only and disabled skills are
 * invisible and refused.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandboxTools } from "../../src/builtins/sandbox-tools";
import { humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createSandboxMiddleware } from "../../src/middlewares/sandbox";
import { createSkillToolPolicyMiddleware } from "../../src/middlewares/skill-tool-policy";
import { createAgent } from "../../src/runtime";
import { BwrapSandboxProvider, LocalSandboxProvider, parseSandboxConfig } from "../../src/sandbox";
import type { SandboxProvider } from "../../src/sandbox";
import { SkillRegistry } from "../../src/skills";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { bwrapAvailable, tempBase } from "../sandbox/helpers";
import { writeSkill } from "./helpers";

const base = tempBase("dfskview-");
afterAll(() => base.cleanup());
const skillsPath = path.join(base.dir, "skills");
writeSkill(path.join(skillsPath, "public/alpha"), "name: alpha\ndescription: Alpha skill.", "# Alpha\nRun scripts/hello.sh, then read references/guide.md.\n", {
  "scripts/hello.sh": "#!/bin/sh\necho \"hello from alpha\"\n",
  "references/guide.md": "# Guide\nstep one\n",
});
writeSkill(path.join(skillsPath, "public/beta"), "name: beta\ndescription: Beta skill.", "# Beta\nhidden\n");
const extensionsPath = path.join(base.dir, "extensions_config.json");
fs.writeFileSync(extensionsPath, JSON.stringify({ skills: { beta: { enabled: false } } }));
const dataDir = path.join(base.dir, "data");
const registry = new SkillRegistry({ skillsPath, dataDir, extensionsPath });
const canonical = fs.readFileSync(path.join(skillsPath, "public/alpha/SKILL.md"), "utf8");

async function runScript(provider: SandboxProvider, calls: Array<{ name: string; args: Record<string, unknown> }>, threadId: string): Promise<ToolMessage[]> {
  await registry.ensureView("default");
  const model = new ScriptedModel([...calls.map((c) => ({ toolCalls: [{ name: c.name, args: { description: "step", ...c.args } }] })), "done"]);
  const agent = createAgent({
    model,
    tools: createSandboxTools({ provider }),
    stateSchema: threadStateSchema,
    middleware: [createSandboxMiddleware({ provider }), createSkillToolPolicyMiddleware({ registry })],
  });
  const res = await agent.invoke({ messages: [humanMessage("use alpha")] }, { threadId });
  expect(res.status).toBe("success");
  return res.state.messages.filter((m): m is ToolMessage => m.type === "tool");
}

describe("skills view in the local sandbox (file tools)", () => {
  it("reads progressively, refuses writes and disabled skills", async () => {
    const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: dataDir, skillsPath: registry.mountPoints("default")[0]!.host });
    const out = await runScript(
      provider,
      [
        { name: "read_file", args: { path: "/mnt/skills/public/alpha/SKILL.md" } },
        { name: "read_file", args: { path: "/mnt/skills/public/alpha/references/guide.md" } },
        { name: "ls", args: { path: "/mnt/skills/public" } },
        { name: "write_file", args: { path: "/mnt/skills/public/alpha/SKILL.md", content: "pwned" } },
        { name: "read_file", args: { path: "/mnt/skills/public/beta/SKILL.md" } },
      ],
      "local1",
    );
    expect(String(out[0]!.content)).toContain("Run scripts/hello.sh");
    expect(String(out[1]!.content)).toContain("step one");
    expect(String(out[2]!.content)).toContain("/mnt/skills/public/alpha");
    expect(String(out[2]!.content)).not.toContain("beta");
    expect(out[3]!.status).toBe("error");
    expect(String(out[3]!.content)).toMatch(/read-only/);
    expect(String(out[4]!.content)).toBe("Error: Skill 'beta' is disabled. Its files cannot be used; ask the user to enable it first.");
    expect(fs.readFileSync(path.join(skillsPath, "public/alpha/SKILL.md"), "utf8")).toBe(canonical);
    await provider.shutdown();
  });
});

describe.skipIf(!bwrapAvailable())("skills view in bubblewrap (bash)", () => {
  it("runs and reads referenced files, cannot write, never sees a disabled skill", async () => {
    const provider = new BwrapSandboxProvider(parseSandboxConfig({}), { baseDir: dataDir, skillsPath: registry.mountPoints("default")[0]!.host });
    const out = await runScript(
      provider,
      [
        { name: "read_file", args: { path: "/mnt/skills/public/alpha/SKILL.md" } },
        { name: "bash", args: { command: "sh /mnt/skills/public/alpha/scripts/hello.sh && cat /mnt/skills/public/alpha/references/guide.md" } },
        { name: "bash", args: { command: "echo pwned > /mnt/skills/public/alpha/SKILL.md; rm -f /mnt/skills/public/alpha/references/guide.md; ls /mnt/skills/public" } },
        { name: "bash", args: { command: "cat /mnt/skills/public/beta/SKILL.md" } },
      ],
      "bwrap1",
    );
    expect(String(out[0]!.content)).toContain("# Alpha");
    expect(String(out[1]!.content)).toContain("hello from alpha");
    expect(String(out[1]!.content)).toContain("step one");
    const denied = String(out[2]!.content);
    expect(denied).toMatch(/Read-only file system|Permission denied/);
    expect(denied).toMatch(/(^|\n)alpha(\n|$)/);
    expect(denied).not.toContain("beta");
    expect(String(out[3]!.content)).toContain("Skill 'beta' is disabled");
    expect(fs.readFileSync(path.join(skillsPath, "public/alpha/SKILL.md"), "utf8")).toBe(canonical);
    expect(fs.existsSync(path.join(skillsPath, "public/alpha/references/guide.md"))).toBe(true);

    // Enabling beta makes it appear in the running sandbox (the view is re-projected).
    await registry.setEnabled("beta", true, "default");
    const sb = provider.get(await provider.acquire("bwrap1"))!;
    const res = await sb.executeCommand("cat /mnt/skills/public/beta/SKILL.md");
    expect(res.stdout).toContain("# Beta");
    await provider.shutdown();
    await registry.setEnabled("beta", false, "default");
  });
});
