/**
 * `deerflow … | head`: when stdout's reader is gone while the CLI still runs, it
 * ends with 141 (128 + SIGPIPE) and no "Unhandled 'error' event" stack trace.
 * `scripted-llm` prints its banner and keeps running, so its failed write is
 * what ends it (a command that exits right after writing would end with its own code).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, cleanEnv, tempDir } from "./helpers";

describe("a closed stdout", { timeout: 60_000 }, () => {
  it("ends the CLI quietly with 141", async () => {
    const child = spawn(process.execPath, [BIN, "scripted-llm", "--port", "0", "--quiet"], { cwd: tempDir(), env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    // close the reading end before the CLI has loaded: its first write meets EPIPE
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toContain("Unhandled 'error' event");
    expect(code).toBe(141);
  });
});
