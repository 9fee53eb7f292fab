import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { convertCallToolResult, MAX_PATH_CHECKS, rewritePathsInText, toVirtualPath } from "../../src/mcp";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-conv-"));
const userData = path.join(root, "user-data");
const ws = path.join(userData, "workspace");
fs.mkdirSync(path.join(ws, "out"), { recursive: true });
fs.writeFileSync(path.join(ws, "out", "shot.png"), "png");
fs.writeFileSync(path.join(root, "outside.txt"), "x");
const scope = { userDataDir: userData, cwd: ws };
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("MCP result conversion", () => {
  it("maps existing files inside the thread's user-data (absolute, file://, relative) and leaves everything else", () => {
    expect(toVirtualPath(path.join(ws, "out", "shot.png"), scope)).toBe("/mnt/user-data/workspace/out/shot.png");
    expect(toVirtualPath(`file://${path.join(ws, "out", "shot.png")}`, scope)).toBe("/mnt/user-data/workspace/out/shot.png");
    expect(toVirtualPath("out/shot.png", scope)).toBe("/mnt/user-data/workspace/out/shot.png");
    expect(toVirtualPath(path.join(root, "outside.txt"), scope)).toBeUndefined();
    expect(toVirtualPath(path.join(ws, "missing.png"), scope)).toBeUndefined();
    expect(toVirtualPath("https://x.test/a.png", scope)).toBeUndefined();
    const text = `Saved (${path.join(ws, "out", "shot.png")}), also ./out/shot.png. Not ${path.join(root, "outside.txt")} or a/b.`;
    expect(rewritePathsInText(text, scope)).toBe(
      `Saved (/mnt/user-data/workspace/out/shot.png), also /mnt/user-data/workspace/out/shot.png. Not ${path.join(root, "outside.txt")} or a/b.`,
    );
  });

  it("does not map a planted symlink out of the thread (so a result cannot tell whether a host file exists)", () => {
    fs.symlinkSync(path.join(root, "outside.txt"), path.join(ws, "out", "exists.txt"));
    fs.symlinkSync(path.join(root, "nope.txt"), path.join(ws, "out", "missing.txt"));
    expect(toVirtualPath(path.join(ws, "out", "exists.txt"), scope)).toBeUndefined();
    expect(toVirtualPath(path.join(ws, "out", "missing.txt"), scope)).toBeUndefined();
    // A link that stays inside the thread still maps, under the name the server used.
    fs.symlinkSync(path.join(ws, "out", "shot.png"), path.join(ws, "out", "alias.png"));
    expect(toVirtualPath(path.join(ws, "out", "alias.png"), scope)).toBe("/mnt/user-data/workspace/out/alias.png");
  });

  it("is linear on huge results without separators", () => {
    const big = "a/".repeat(300_000);
    const t0 = Date.now();
    expect(rewritePathsInText(big, scope)).toBe(big);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("checks at most MAX_PATH_CHECKS distinct candidates per result (a result full of path-like tokens cannot hold the event loop)", () => {
    // Before: one synchronous stat per distinct token, ~5 s for a 10 MiB result a server can return from an agent-written file.
    const decoys = Array.from({ length: MAX_PATH_CHECKS + 10 }, (_, i) => path.join(ws, `missing-${i}`)).join(" ");
    const real = path.join(ws, "out", "shot.png");
    expect(rewritePathsInText(`${real} ${decoys}`, scope).startsWith("/mnt/user-data/workspace/out/shot.png ")).toBe(true);
    expect(rewritePathsInText(`${decoys} ${real}`, scope).endsWith(` ${real}`)).toBe(true);
    // The budget spans every block of one result.
    const r = convertCallToolResult({ content: [{ type: "text", text: decoys }, { type: "text", text: real }] }, scope);
    expect(JSON.stringify(r.content)).toContain(JSON.stringify(real).slice(1, -1));
    // …and every resource link of it.
    const links = Array.from({ length: MAX_PATH_CHECKS + 5 }, (_, i) => ({ type: "resource_link", uri: path.join(ws, `gone-${i}`), name: `l${i}` }));
    const withLinks = convertCallToolResult({ content: [...links, { type: "resource_link", uri: real, name: "real" }] }, scope);
    expect(JSON.stringify(withLinks)).not.toContain("/mnt/user-data/workspace/out/shot.png");
  });

  it("converts every content kind", () => {
    const r = convertCallToolResult(
      {
        content: [
          { type: "text", text: "t" },
          { type: "image", data: "AAAA", mimeType: "image/jpeg" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "mem://a", text: "embedded text" } },
          { type: "resource", resource: { uri: "mem://b", blob: "AAAA", mimeType: "image/png" } },
          { type: "resource", resource: { uri: "mem://c", blob: "AAAA", mimeType: "application/zip" } },
        ],
      },
      scope,
    );
    expect(r.status).toBe("success");
    expect(r.content).toEqual([
      { type: "text", text: "t" },
      { type: "text", text: "[image: image/jpeg, 3 bytes]" },
      { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } },
      { type: "text", text: "[audio: audio/wav omitted]" },
      { type: "text", text: "embedded text" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "text", text: "[embedded resource: mem://c (application/zip)]" },
    ]);
    expect(convertCallToolResult({ content: [], structuredContent: { ok: true } })).toEqual({ content: '{"ok":true}', status: "success", artifact: { structured_content: { ok: true } } });
    expect(convertCallToolResult({ content: [] })).toEqual({ content: "(no output)", status: "success" });
    expect(convertCallToolResult({ isError: true, content: [] })).toEqual({ content: "Error: the MCP tool reported an error", status: "error" });
    expect(convertCallToolResult({ toolResult: { legacy: 1 } })).toMatchObject({ content: '{"legacy":1}' });
  });
});
