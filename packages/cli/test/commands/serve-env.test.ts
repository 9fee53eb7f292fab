import { describe, expect, it } from "vitest";
import { freePort } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, SCRIPTED_AGENT, startCli, stopChild, tempDir } from "../helpers";

describe("deerflow serve reads PORT and HOST", { timeout: 60_000 }, () => {
  it("listens on $PORT / $HOST when --port / --host are not given (the old DEERFLOW_AGENT_MODULE spelling still works)", async () => {
    const dir = tempDir();
    const port = await freePort();
    const env = cleanEnv({ DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT, DEERFLOW_TEST_SCRIPT: "[]", PORT: String(port), HOST: "127.0.0.1" });
    const { child, match } = await startCli(["serve", "--data-dir", "data"], { cwd: dir, env, ready: /DeerFlow is running at (http:\/\/\S+)/ });
    try {
      expect(match[1]).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      await stopChild(child);
    }
  });

  it("a bad PORT is named", async () => {
    const dir = tempDir();
    const r = await runCli(["serve", "--data-dir", "data"], { cwd: dir, env: cleanEnv({ DEER_FLOW_AGENT_MODULE: SCRIPTED_AGENT, DEERFLOW_TEST_SCRIPT: "[]", PORT: "http" }) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("The PORT environment variable must be an integer 0-65535, got 'http'");
  });
});
