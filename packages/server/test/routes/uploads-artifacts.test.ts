import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

function form(files: Array<[string, string]>): FormData {
  const fd = new FormData();
  for (const [name, body] of files) fd.append("files", new Blob([body]), name);
  return fd;
}

const userData = (g: TestGateway, tid: string) => path.join(g.dataDir, "users", "default", "threads", tid, "user-data");

describe("uploads", () => {
  it("stores files atomically, sanitises names, dedupes, lists and deletes", async () => {
    gw = await startTestGateway();
    const url = `${gw.url}/api/threads/up-1/uploads`;
    const r = await fetch(url, { method: "POST", body: form([["report.pdf", "A"], ["../../etc/passwd", "B"], [".hidden", "C"], ["a\u0001b.txt", "D"]]) });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { success: boolean; files: Array<Record<string, unknown>>; skipped_files: string[] };
    expect(body.success).toBe(true);
    expect(body.files.map((f) => f.filename)).toEqual(["report.pdf", "passwd", "ab.txt"]);
    expect(body.skipped_files).toEqual([".hidden"]);
    expect(body.files[0]).toMatchObject({ size: 1, virtual_path: "/mnt/user-data/uploads/report.pdf", artifact_url: "/api/threads/up-1/artifacts/mnt/user-data/uploads/report.pdf" });
    const dir = path.join(userData(gw, "up-1"), "uploads");
    expect(fs.readdirSync(dir).sort()).toEqual(["ab.txt", "passwd", "report.pdf"]);
    expect(fs.existsSync(path.join(gw.dataDir, "users", "default", "threads", "etc"))).toBe(false);
    // DeerFlow's upload naming: duplicates get _N only within one request; a name that
    // exists from an earlier request is replaced
    const again = (await (await fetch(url, { method: "POST", body: form([["report.pdf", "E"], ["report.pdf", "F"]]) })).json()) as { files: Array<{ filename: string }> };
    expect(again.files.map((f) => f.filename)).toEqual(["report.pdf", "report_1.pdf"]);
    expect(fs.readFileSync(path.join(dir, "report.pdf"), "utf8")).toBe("E");
    expect(fs.readFileSync(path.join(dir, "report_1.pdf"), "utf8")).toBe("F");
    expect(fs.readdirSync(dir).some((n) => n.endsWith(".part"))).toBe(false);
    const list = (await (await fetch(`${url}/list`)).json()) as { files: Array<{ filename: string }>; count: number };
    expect(list.count).toBe(4);
    expect(list.files.map((f) => f.filename)).toEqual(["ab.txt", "passwd", "report.pdf", "report_1.pdf"]);
    const del = await fetch(`${url}/report_1.pdf`, { method: "DELETE" });
    expect(await del.json()).toMatchObject({ success: true });
    expect((await fetch(`${url}/report_1.pdf`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${url}/..%2F..%2Fgateway.db`, { method: "DELETE" })).status).toBe(400);
    expect(fs.existsSync(path.join(gw.dataDir, "gateway.db"))).toBe(true);
    expect((await fetch(`${gw.url}/api/threads/bad%20id/uploads`, { method: "POST", body: form([["x", "y"]]) })).status).toBe(400);
    expect((await fetch(url, { method: "POST", body: new FormData() })).status).toBe(400);
  });

  it("enforces file count, file size and total size limits with 413", async () => {
    gw = await startTestGateway({ uploads: { max_files: 2, max_file_size: 10, max_total_size: 15 } });
    const url = `${gw.url}/api/threads/up-2/uploads`;
    expect((await fetch(url, { method: "POST", body: form([["a", "1"], ["b", "2"], ["c", "3"]]) })).status).toBe(413);
    expect((await fetch(url, { method: "POST", body: form([["a", "x".repeat(11)]]) })).status).toBe(413);
    const total = await fetch(url, { method: "POST", body: form([["a", "x".repeat(8)], ["b", "y".repeat(8)]]) });
    expect(total.status).toBe(413);
    expect(((await total.json()) as { detail: string }).detail).toMatch(/total limit \(uploads\.max_total_size\)/);
    expect(fs.existsSync(path.join(userData(gw, "up-2"), "uploads", "a"))).toBe(false);
    const upDir = path.join(userData(gw, "up-2"), "uploads");
    expect(fs.existsSync(upDir) ? fs.readdirSync(upDir) : []).toEqual([]);
  });
});

describe("artifacts", () => {
  it("serves files inline, Range 206/416, download and forced attachment for html/svg", async () => {
    gw = await startTestGateway();
    const out = path.join(userData(gw, "art-1"), "outputs");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "report.md"), "# Title\nbody text\n");
    fs.writeFileSync(path.join(out, "page.html"), "<script>alert(1)</script>");
    fs.writeFileSync(path.join(out, "pic.svg"), "<svg/>");
    fs.writeFileSync(path.join(out, "empty.txt"), "");
    fs.writeFileSync(path.join(out, "notes.weird"), "plain words");
    const base = `${gw.url}/api/threads/art-1/artifacts/mnt/user-data/outputs`;
    const r = await fetch(`${base}/report.md`);
    expect(r.status).toBe(200);
    // text of any kind is plain text to a browser (nothing a thread holds renders as markup)
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(r.headers.get("content-disposition")).toBe("inline; filename*=UTF-8''report.md");
    expect(await r.text()).toBe("# Title\nbody text\n");
    const part = await fetch(`${base}/report.md`, { headers: { Range: "bytes=0-6" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 0-6/18");
    expect(await part.text()).toBe("# Title");
    const big = await fetch(`${base}/report.md`, { headers: { Range: "bytes=0-1048575" } });
    expect(big.status).toBe(206);
    expect(big.headers.get("content-range")).toBe("bytes 0-17/18");
    const bad = await fetch(`${base}/report.md`, { headers: { Range: "bytes=100-200" } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("content-range")).toBe("bytes */18");
    const empty = await fetch(`${base}/empty.txt`, { headers: { Range: "bytes=0-1048575" } });
    expect(empty.status).toBe(416);
    expect(empty.headers.get("content-range")).toBe("bytes */0");
    const dl = await fetch(`${base}/report.md?download=true`);
    expect(dl.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''report.md");
    expect((await fetch(`${base}/page.html`)).headers.get("content-disposition")).toMatch(/^attachment/);
    expect((await fetch(`${base}/pic.svg`)).headers.get("content-disposition")).toMatch(/^attachment/);
    expect((await fetch(`${base}/notes.weird`)).headers.get("content-type")).toMatch(/^text\/plain/);
  });

  it("blocks traversal, symlink escape, non user-data paths, directories and missing files", async () => {
    gw = await startTestGateway();
    const ud = userData(gw, "art-2");
    fs.mkdirSync(path.join(ud, "outputs", "sub"), { recursive: true });
    const secret = path.join(gw.dataDir, "secret.txt");
    fs.writeFileSync(secret, "TOP SECRET");
    fs.symlinkSync(secret, path.join(ud, "outputs", "link.txt"));
    fs.symlinkSync(gw.dataDir, path.join(ud, "outputs", "dirlink"));
    const base = `${gw.url}/api/threads/art-2/artifacts`;
    const status = async (p: string) => {
      const r = await fetch(`${base}/${p}`);
      const text = await r.text();
      expect(text).not.toContain("TOP SECRET");
      return r.status;
    };
    expect(await status("mnt/user-data/outputs/link.txt")).toBe(403);
    expect(await status("mnt/user-data/outputs/dirlink/secret.txt")).toBe(403);
    // raw request so the client does not normalise the dot segments away
    const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(gw!.url);
      const req = http.request({ host: u.hostname, port: u.port, path: "/api/threads/art-2/artifacts/mnt/user-data/outputs/../../../../../secret.txt" }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(raw.body).not.toContain("TOP SECRET");
    // the URL parser collapses the dot segments before routing: it never reaches a file
    expect(raw.status).toBeGreaterThanOrEqual(400);
    expect(raw.status).toBeLessThan(500);
    expect(await status("mnt/user-data/outputs/..%2F..%2F..%2F..%2F..%2Fsecret.txt")).toBe(403);
    expect(await status("etc/passwd")).toBe(400);
    expect(await status("mnt/user-data/outputs/sub")).toBe(400);
    expect(await status("mnt/user-data/outputs/missing.txt")).toBe(404);
  });
});
