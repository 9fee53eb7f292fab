import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAppConfigText } from "@deerflow-ts/harness/config";
import { runCli, tempDir } from "../helpers";

const base = ["init", "--provider", "openai", "--api-key", "sk-1", "--sandbox", "local"];
const agentsApi = (dir: string) =>
  (parseAppConfigText(readFileSync(path.join(dir, "config.yaml"), "utf8"), { env: { OPENAI_API_KEY: "sk-1" } }).config.agents_api as { enabled: boolean }).enabled;

describe("deerflow init: the custom-agents API question", { timeout: 60_000 }, () => {
  it("leaves agents_api off by default and with --agents-api off", async () => {
    const a = tempDir();
    expect((await runCli([...base, "--yes"], { cwd: a })).code).toBe(0);
    expect(agentsApi(a)).toBe(false);
    const b = tempDir();
    expect((await runCli([...base, "--agents-api", "off", "--yes"], { cwd: b })).code).toBe(0);
    expect(agentsApi(b)).toBe(false);
  });

  it("enables it with --agents-api on, or when the answer is on", async () => {
    const a = tempDir();
    expect((await runCli([...base, "--agents-api", "on", "--yes"], { cwd: a })).code).toBe(0);
    expect(agentsApi(a)).toBe(true);
    expect(readFileSync(path.join(a, "config.yaml"), "utf8")).toContain("agents_api:\n  enabled: true");
    const b = tempDir();
    // model (default), then the agents question
    expect((await runCli(base, { cwd: b, input: "\non\n" })).code).toBe(0);
    expect(agentsApi(b)).toBe(true);
  });

  it("rejects an answer that is neither on nor off", async () => {
    const r = await runCli([...base, "--agents-api", "maybe", "--yes"], { cwd: tempDir() });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--agents-api must be on or off");
  });
});
