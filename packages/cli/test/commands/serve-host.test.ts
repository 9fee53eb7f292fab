import { describe, expect, it } from "vitest";
import { checkServeHost, SERVE_HELP } from "../../src/commands/serve";
import { cleanEnv, runCli, SCRIPTED_AGENT, tempDir } from "../helpers";

describe("deerflow serve --host", { timeout: 60_000 }, () => {
  it("refuses a non-loopback --host without --allow-unauthenticated, before listening, and says why", async () => {
    const dir = tempDir();
    const env = cleanEnv({ DEERFLOW_AGENT_MODULE: SCRIPTED_AGENT, DEERFLOW_TEST_SCRIPT: "[]" });
    // (refused before any socket is opened: nothing is bound on these addresses)
    for (const host of ["0.0.0.0", "::", "192.168.1.50"]) {
      const r = await runCli(["serve", "--host", host, "--port", "0", "--data-dir", "data"], { cwd: dir, env });
      expect(r.code, host).toBe(2);
      expect(r.stderr).toContain(`Refusing to listen on ${host}`);
      expect(r.stderr).toContain("sign-in is off");
      expect(r.stderr).toContain("Turn sign-in on");
      expect(r.stderr).toContain("--allow-unauthenticated");
      expect(r.stdout).not.toContain("DeerFlow is running");
    }
  });

  it("loopback hosts need no flag; with the flag a non-loopback host gets a warning naming what it opens", async () => {
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]) expect(await checkServeHost(host, false), host).toBeUndefined();
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "fd00::1"]) {
      await expect(checkServeHost(host, false), host).rejects.toThrow(/Refusing to listen/);
      const warning = await checkServeHost(host, true);
      expect(warning, host).toMatch(/^WARNING: listening on .* without authentication/);
      expect(warning).toContain("MCP servers");
    }
    expect(SERVE_HELP).toContain("--allow-unauthenticated");
  });
});
