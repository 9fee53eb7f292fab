import fs from "node:fs";
import path from "node:path";
import { threadPaths } from "@deerflow-ts/harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servedFile } from "../../src/security";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const XML_WITH_SCRIPT = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>fetch('/api/mcp/config',{method:'PUT'})</script></html>`;

describe("files served from a thread never render as active content", () => {
  let gw: TestGateway;
  let outputs: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    outputs = threadPaths(gw.dataDir, "default", "files-1").outputs;
    fs.mkdirSync(outputs, { recursive: true });
  });
  afterAll(async () => gw.close());

  const at = (area: string, name: string, query = "") => fetch(`${gw.url}/api/threads/files-1/artifacts/mnt/user-data/${area}/${encodeURIComponent(name)}${query}`);

  it("uploaded report.xml / .svg / .html / .xhtml / .js are attachments with CSP sandbox and nosniff", async () => {
    const form = new FormData();
    for (const [name, body] of [
      ["report.xml", XML_WITH_SCRIPT],
      ["pic.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`],
      ["page.html", "<script>alert(1)</script>"],
      ["doc.xhtml", XML_WITH_SCRIPT],
      ["app.js", "alert(1)"],
    ]) {
      form.append("files", new Blob([body]), name);
    }
    expect((await fetch(`${gw.url}/api/threads/files-1/uploads`, { method: "POST", body: form })).status).toBe(200);
    for (const name of ["report.xml", "pic.svg", "page.html", "doc.xhtml", "app.js"]) {
      const res = await at("uploads", name);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-disposition"), name).toBe(`attachment; filename*=UTF-8''${name}`);
      expect(res.headers.get("content-security-policy"), name).toBe("sandbox");
      expect(res.headers.get("x-content-type-options"), name).toBe("nosniff");
      // only SVG keeps its type (for <img> previews, which never run its script)
      expect(res.headers.get("content-type"), name).toBe(name.endsWith(".svg") ? "image/svg+xml" : "application/octet-stream");
    }
  });

  it("an agent-written XML in outputs is served the same way, and so are byte ranges of it", async () => {
    fs.writeFileSync(path.join(outputs, "report.xml"), XML_WITH_SCRIPT);
    const res = await at("outputs", "report.xml");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment/);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    const ranged = await fetch(res.url, { headers: { Range: "bytes=0-4" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("<?xml");
    expect(ranged.headers.get("content-security-policy")).toBe("sandbox");
    expect(ranged.headers.get("content-disposition")).toMatch(/^attachment/);
  });

  it("text is inline as text/plain (Markdown, CSV, code, unknown text); passive media inline with their type", async () => {
    const files: Record<string, string | Buffer> = {
      "notes.md": "# hi <script>alert(1)</script>",
      "data.csv": "a,b\n1,2\n",
      "main.py": "print(1)",
      "style.css": "body{}",
      "data.json": '{"a":1}',
      "plain.weird": "just words",
      "pic.png": Buffer.from("89504e470d0a1a0a", "hex"),
      "doc.pdf": "%PDF-1.4",
      "clip.mp4": Buffer.from([0, 0, 0, 0x18]),
      "blob.bin": Buffer.from([0, 1, 2, 3]),
      "archive.zip": Buffer.from("PK\u0003\u0004"),
    };
    for (const [n, b] of Object.entries(files)) fs.writeFileSync(path.join(outputs, n), b);
    for (const n of ["notes.md", "data.csv", "main.py", "style.css", "data.json", "plain.weird"]) {
      const res = await at("outputs", n);
      expect(res.headers.get("content-type"), n).toBe("text/plain; charset=utf-8");
      expect(res.headers.get("content-disposition"), n).toBe(`inline; filename*=UTF-8''${n}`);
      expect(res.headers.get("content-security-policy"), n).toBe("sandbox");
      expect(res.headers.get("x-content-type-options"), n).toBe("nosniff");
    }
    const types: Record<string, string> = { "pic.png": "image/png", "doc.pdf": "application/pdf", "clip.mp4": "video/mp4" };
    for (const [n, t] of Object.entries(types)) {
      const res = await at("outputs", n);
      expect(res.headers.get("content-type"), n).toBe(t);
      expect(res.headers.get("content-disposition"), n).toMatch(/^inline/);
      expect(res.headers.get("content-security-policy"), n).toBe("sandbox");
    }
    for (const n of ["blob.bin", "archive.zip"]) expect((await at("outputs", n)).headers.get("content-disposition"), n).toMatch(/^attachment/);
    // ?download=true makes anything an attachment
    expect((await at("outputs", "notes.md", "?download=true")).headers.get("content-disposition")).toMatch(/^attachment/);
  });

  it("error answers of the file routes carry the same headers", async () => {
    const res = await at("outputs", "missing.txt");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("an API path spelled with percent-escapes (routed the same) gets the same headers", async () => {
    for (const url of [`${gw.url}/%61pi/threads/files-1`, `${gw.url}/%61pi/threads/files-1/artifacts/mnt/user-data/outputs/missing.txt`]) {
      const res = await fetch(url);
      expect(res.status, url).not.toBe(405);
      expect(res.headers.get("content-security-policy"), url).toBe("sandbox");
      expect(res.headers.get("x-content-type-options"), url).toBe("nosniff");
    }
  });

  it("classification table", () => {
    expect(servedFile("text/html", false)).toEqual({ disposition: "attachment", contentType: "application/octet-stream" });
    expect(servedFile("application/rss+xml", false).disposition).toBe("attachment");
    expect(servedFile("text/xml", false).contentType).toBe("application/octet-stream");
    expect(servedFile("image/webp", false)).toEqual({ disposition: "inline", contentType: "image/webp" });
    expect(servedFile("audio/mpeg", true).disposition).toBe("attachment");
    expect(servedFile("application/x-unknown", false).disposition).toBe("attachment");
  });
});
