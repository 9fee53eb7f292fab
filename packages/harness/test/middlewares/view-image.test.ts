import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiMessage, humanMessage, toolMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { Command, threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { createViewImageMiddleware, VIEW_IMAGE_CONTEXT_ID_PREFIX } from "../../src/middlewares/view-image";
import { apply, callAI, leadRuntime, leadState } from "./_fixtures-lead";

const dir = mkdtempSync(path.join(tmpdir(), "viewimg-"));
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const file = path.join(dir, "a.png");
writeFileSync(file, png);
const viewed = { "/mnt/user-data/uploads/a.png": { mime_type: "image/png", size: png.length, actual_path: file } };

describe("ViewImageMiddleware", () => {
  const done = () =>
    leadState([humanMessage("look"), callAI([{ name: "view_image", id: "v1" }]), toolMessage("Successfully read image", { tool_call_id: "v1" })], { viewed_images: viewed });

  it("injects a hidden image message once all view_image calls have results, then removes it", async () => {
    const mw = createViewImageMiddleware();
    const st = done();
    const res = (await mw.beforeModel!(st, leadRuntime())) as any;
    const msg = res.messages[0];
    expect(msg.id.startsWith(VIEW_IMAGE_CONTEXT_ID_PREFIX)).toBe(true);
    expect(msg.additional_kwargs).toEqual({ hide_from_ui: true, deerflow_view_image_context: true });
    expect(msg.content).toEqual([
      { type: "text", text: "Here are the images you've viewed:" },
      { type: "text", text: "\n- **/mnt/user-data/uploads/a.png** (image/png)" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
    ]);
    let after = apply(st, res);
    expect(await mw.beforeModel!(after, leadRuntime())).toBeUndefined(); // already injected
    after = apply({ ...after, messages: [...after.messages, aiMessage("I see a PNG")] }, undefined);
    after = apply(after, await mw.afterModel!(after, leadRuntime()));
    expect(after.messages.some((m) => m.id?.startsWith(VIEW_IMAGE_CONTEXT_ID_PREFIX))).toBe(false);
    expect(JSON.stringify(after.messages)).not.toContain("base64");
  });

  it("waits for pending results, skips changed files, and does nothing without vision", async () => {
    const mw = createViewImageMiddleware();
    expect(await mw.beforeModel!(leadState([callAI([{ name: "view_image", id: "v1" }, { name: "bash", id: "b" }]), toolMessage("ok", { tool_call_id: "v1" })], { viewed_images: viewed }), leadRuntime())).toBeUndefined();
    const changed = { "/x.png": { mime_type: "image/png", size: 999, actual_path: file } };
    const res = (await mw.beforeModel!(leadState([callAI([{ name: "view_image", id: "v" }]), toolMessage("ok", { tool_call_id: "v" })], { viewed_images: changed }), leadRuntime())) as any;
    expect(res.messages[0].content[2]).toEqual({ type: "text", text: `  (file unavailable or changed on disk: ${file})` });
    expect(await createViewImageMiddleware({ supportsVision: false }).beforeModel!(done(), leadRuntime())).toBeUndefined();
  });

  it("full run: the model sees the image; the checkpoint keeps no base64", async () => {
    const viewImage = tool({
      name: "view_image",
      description: "v",
      schema: z.object({ image_path: z.string() }),
      execute: (_a, rt) => new Command({ update: { viewed_images: viewed, messages: [toolMessage("Successfully read image", { tool_call_id: rt.toolCallId, name: "view_image" })] } }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/a.png" } }] }, "A tiny PNG."]);
    const agent = createAgent({ model, tools: [viewImage], stateSchema: threadStateSchema, middleware: [createViewImageMiddleware()] });
    const res = await agent.invoke({ messages: [humanMessage("what is it?")] }, { threadId: "vi1" });
    const img = model.requests[1].messages.at(-1)!;
    expect(img.additional_kwargs.deerflow_view_image_context).toBe(true);
    expect(JSON.stringify(img.content)).toContain("data:image/png;base64,");
    expect(JSON.stringify(res.state.messages)).not.toContain("base64");
    const snap = await agent.getState("vi1");
    expect(JSON.stringify(snap!.values.messages)).not.toContain("base64");
  });
});
