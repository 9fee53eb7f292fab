import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import { createUploadsMiddleware } from "../../src/middlewares/uploads";
import { threadDirs } from "../../src/sandbox";
import { tempBase } from "../sandbox/helpers";
import { hookRuntime } from "./_sandbox-fixtures";

const b = tempBase("dfup-");
afterAll(() => b.cleanup());

describe("UploadsMiddleware", () => {
  const uploads = threadDirs(b.dir, "t1").uploads;
  mkdirSync(uploads, { recursive: true });
  writeFileSync(path.join(uploads, "report.pdf"), Buffer.alloc(2048));
  symlinkSync("/etc/passwd", path.join(uploads, "evil.txt"));
  const mw = createUploadsMiddleware({ base_dir: b.dir });

  it("prepends <current_uploads> for files that exist and sets uploaded_files", async () => {
    const msg = humanMessage("summarise it", {
      additional_kwargs: { files: [{ filename: "report.pdf" }, { filename: "missing.txt" }, { filename: "evil.txt" }, { filename: "../x" }] },
    });
    const r = (await mw.beforeAgent!({ messages: [msg] }, hookRuntime("t1"))) as { uploaded_files: Array<{ filename: string }>; messages: Array<{ id: string; content: string }> };
    expect(r.uploaded_files.map((f) => f.filename)).toEqual(["report.pdf"]);
    expect(r.messages[0].id).toBe(msg.id);
    expect(r.messages[0].content).toMatch(/^<current_uploads>\n/);
    expect(r.messages[0].content).toContain("- report.pdf (2.0 KB)\n  Path: /mnt/user-data/uploads/report.pdf");
    expect(r.messages[0].content.endsWith("</current_uploads>\n\nsummarise it")).toBe(true);
    // idempotent: an already-injected message is not wrapped twice
    const again = (await mw.beforeAgent!({ messages: [{ ...msg, content: r.messages[0].content }] }, hookRuntime("t1"))) as Record<string, unknown>;
    expect(again.messages).toBeUndefined();
  });

  it("writes [] when the message carries no files", async () => {
    expect(await mw.beforeAgent!({ messages: [humanMessage("hi")] }, hookRuntime("t1"))).toEqual({ uploaded_files: [] });
  });
});
