import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startTestGateway } from "./helpers/test-gateway";
import type { TestGateway } from "./helpers/test-gateway";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "df-static-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("the web UI at / before and after it is built", () => {
  it("without a build, / and SPA routes say exactly what to run (never a bare JSON 404); the API still works", async () => {
    gw = await startTestGateway({ webDistDir: path.join(tmp, "never-built", "dist") });
    for (const p of ["/", "/threads/abc", "/agents"]) {
      const r = await fetch(`${gw.url}${p}`);
      expect(r.status, p).toBe(503);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await r.text();
      expect(html).toContain("<pre>npm run build:web</pre>");
      expect(html).toContain("web UI is not built");
    }
    const asset = await fetch(`${gw.url}/assets/index-123.js`);
    expect(asset.status).toBe(404);
    expect(await asset.json()).toEqual({ detail: "Not Found" });
    expect((await fetch(`${gw.url}/api/models`)).status).toBe(200);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it("once index.html exists it is served (no restart), with SPA fallback", async () => {
    const dist = path.join(tmp, "later", "dist");
    gw = await startTestGateway({ webDistDir: dist });
    expect((await fetch(`${gw.url}/`)).status).toBe(503);
    fs.mkdirSync(dist, { recursive: true });
    fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>DeerFlow UI</title>");
    for (const p of ["/", "/threads/abc"]) {
      const r = await fetch(`${gw.url}${p}`);
      expect(r.status).toBe(200);
      expect(await r.text()).toContain("<title>DeerFlow UI</title>");
    }
  });
});
