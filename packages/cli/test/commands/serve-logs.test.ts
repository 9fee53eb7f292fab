/**
 * `deerflow serve` with DeerFlow's `logging.enhance: {enabled: true, format: json}`:
 * every stdout line (banners included) is one JSON object, requests leave access lines,
 * and a secret sent in a request header or set in the config never reaches a line.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, cleanEnv, stopChild, tempDir } from "../helpers";

const API_KEY = "sk-test-abcdefghijklmnop0123456789";

describe("deerflow serve with JSON logs", { timeout: 60_000 }, () => {
  it("writes only JSON lines on stdout, with the banner, access lines and levels", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "config.yaml"),
      ["config_version: 34", "log_level: debug", "logging:", "  enhance:", "    enabled: true", "    format: json", "models:", "  - name: m", "    use: openai-compatible", "    model: m", `    api_key: ${API_KEY}`, "    base_url: http://127.0.0.1:9/v1", "sandbox:", "  use: local", ""].join("\n"),
    );
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--no-web-build"], { cwd: dir, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => {
        stdout += d;
        const m = /DeerFlow is running at (http:\/\/[\d.:]+)/.exec(stdout);
        if (m) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${stdout}`)));
    });
    try {
      const res = await fetch(`${url}/api/models`, { headers: { authorization: `Bearer ${API_KEY}`, "x-request-id": "cli-req-1" } });
      expect(res.headers.get("x-request-id")).toBe("cli-req-1");
      await res.text();
      // the access line is written when the answer is; wait for it on stdout, not for time
      await new Promise<void>((resolve) => {
        const check = () => (stdout.includes('"request_id":"cli-req-1"') ? resolve() : child.stdout!.once("data", check));
        check();
      });
    } finally {
      await stopChild(child);
    }
    const lines = stdout.split("\n").filter((l) => l.length > 0);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.some((r) => String(r.msg).startsWith("Config: "))).toBe(true);
    expect(records.some((r) => String(r.msg).startsWith("DeerFlow is running at"))).toBe(true);
    const access = records.find((r) => r.request_id === "cli-req-1")!;
    expect(access).toMatchObject({ level: "info", msg: "request", method: "GET", route: "/api/models", status: 200 });
    expect(stdout).not.toContain(API_KEY);
  });
});
