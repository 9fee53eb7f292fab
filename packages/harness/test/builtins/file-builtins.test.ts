import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createListUploadedFilesTool } from "../../src/builtins/list-uploaded-files";
import { createPresentFilesTool, PRESENT_FILES_OUTSIDE_MESSAGE } from "../../src/builtins/present-files";
import { createViewImageTool } from "../../src/builtins/view-image";
import type { ToolMessage } from "../../src/messages";
import { LocalSandboxProvider, parseSandboxConfig, threadDirs } from "../../src/sandbox";
import { Command } from "../../src/state";
import { fakeToolRuntime, tempBase } from "../sandbox/helpers";

const b = tempBase("dfbi-");
afterAll(() => b.cleanup());
const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir: b.dir });

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(16)]);

describe("present_files", () => {
  it("accepts outputs paths (virtual or host) and returns a Command", async () => {
    const sb = provider.get(await provider.acquire("p1"))!;
    await sb.writeFile("/mnt/user-data/outputs/r.md", "x");
    const tool = createPresentFilesTool({ provider });
    const host = path.join(threadDirs(b.dir, "p1").outputs, "r.md");
    const r = await tool.execute({ filepaths: ["/mnt/user-data/outputs/r.md", host] }, fakeToolRuntime("p1"));
    expect(r).toBeInstanceOf(Command);
    const c = r as Command;
    expect(c.update.artifacts).toEqual(["/mnt/user-data/outputs/r.md"]);
    const msg = (c.update.messages as ToolMessage[])[0];
    expect(msg).toMatchObject({ type: "tool", content: "Successfully presented files", tool_call_id: "call-1" });
  });
  it("rejects anything outside outputs, traversal, and missing files", async () => {
    const tool = createPresentFilesTool({ provider });
    for (const p of ["/mnt/user-data/workspace/a.md", "/mnt/user-data/outputs/../workspace/a.md", "/etc/passwd", "/mnt/user-data/outputs"]) {
      expect(await tool.execute({ filepaths: [p] }, fakeToolRuntime("p1"))).toEqual({ content: PRESENT_FILES_OUTSIDE_MESSAGE, status: "error" });
    }
    expect(await tool.execute({ filepaths: ["/mnt/user-data/outputs/nope.md"] }, fakeToolRuntime("p1"))).toMatchObject({ status: "error" });
  });
});

describe("view_image", () => {
  it("records viewed_images when extension and magic bytes agree", async () => {
    const sb = provider.get(await provider.acquire("v1"))!;
    await sb.updateFile("/mnt/user-data/workspace/a.png", PNG);
    await sb.updateFile("/mnt/user-data/workspace/fake.jpg", PNG);
    const tool = createViewImageTool({ provider });
    const r = (await tool.execute({ image_path: "/mnt/user-data/workspace/a.png" }, fakeToolRuntime("v1"))) as Command;
    expect(r.update.viewed_images).toEqual({ "/mnt/user-data/workspace/a.png": { mime_type: "image/png", size: PNG.length, actual_path: "/mnt/user-data/workspace/a.png" } });
    expect((r.update.messages as ToolMessage[])[0].content).toBe("Successfully read image");
    const bad = (await tool.execute({ image_path: "/mnt/user-data/workspace/fake.jpg" }, fakeToolRuntime("v1"))) as { content: string };
    expect(bad.content).toMatch(/^Error: Image content \(image\/png\) does not match its \.jpg extension/);
    expect(((await tool.execute({ image_path: "/mnt/user-data/workspace/x.bmp" }, fakeToolRuntime("v1"))) as { content: string }).content).toMatch(/Unsupported image format/);
    expect(((await tool.execute({ image_path: "/etc/x.png" }, fakeToolRuntime("v1"))) as { content: string }).content).toMatch(/^Error: Only images under/);
  });
});

describe("list_uploaded_files", () => {
  it("lists historical uploads, excluding current ones, staging and hidden files", async () => {
    const sb = provider.get(await provider.acquire("u1"))!;
    await sb.writeFile("/mnt/user-data/uploads/old.md", "# Title\ntext\n## Part\n");
    await sb.writeFile("/mnt/user-data/uploads/new.txt", "n");
    writeFileSync(path.join(threadDirs(b.dir, "u1").uploads, ".upload-abc.part"), "p");
    const tool = createListUploadedFilesTool({ provider });
    const rt = fakeToolRuntime("u1", { state: { messages: [], uploaded_files: [{ filename: "new.txt" }] } });
    const out = (await tool.execute(tool.schema.parse({ include_outline: ["old.md"] }), rt)) as string;
    expect(out).toBe("Previously uploaded files (1):\n- old.md (0.0 KB)\n  Path: /mnt/user-data/uploads/old.md\n    # Title\n    ## Part");
    const none = (await tool.execute(tool.schema.parse({}), fakeToolRuntime("u2"))) as string;
    expect(none).toBe("No previously uploaded files found.");
    expect(() => tool.schema.parse({ max_results: 101 })).toThrow();
  });
});
