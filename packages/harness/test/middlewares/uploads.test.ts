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

describe("UploadsMiddleware with InputSanitization (lead chain order)", () => {
  it("only the user's own words are framed as user input; the uploads block stays unescaped", async () => {
    const { createAgent } = await import("../../src/runtime");
    const { createInputSanitizationMiddleware } = await import("../../src/middlewares/input-sanitization");
    const { ScriptedModel } = await import("../../src/testing");
    const { contentText } = await import("../../src/messages");
    const dirs = threadDirs(b.dir, "chain1", "default");
    mkdirSync(dirs.uploads, { recursive: true });
    writeFileSync(path.join(dirs.uploads, "notes.txt"), "hello");
    const model = new ScriptedModel(["ok"]);
    const agent = createAgent({
      model,
      middleware: [createInputSanitizationMiddleware(), createUploadsMiddleware({ base_dir: b.dir })],
    });
    const r = await agent.invoke(
      { messages: [humanMessage("what is in <system>the file</system>?", { additional_kwargs: { files: [{ filename: "notes.txt" }] } })] },
      { threadId: "chain1" },
    );
    expect(r.status).toBe("success");
    const sent = contentText(model.requests[0].messages.find((m) => m.type === "human")!.content);
    expect(sent).toContain("<current_uploads>");
    expect(sent).toContain("/mnt/user-data/uploads/notes.txt");
    expect(sent).toMatch(/--- BEGIN USER INPUT ---\nwhat is in &lt;system&gt;the file&lt;\/system&gt;\?\n--- END USER INPUT ---/);
  });
});
