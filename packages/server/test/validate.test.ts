/**
 * Request bodies through readJson over real sockets: in one packet with the headers, still arriving when
 * the handler runs, chunked, multi-byte UTF-8; malformed JSON is a 422 and an oversized body a 413, whether
 * its size was declared or not.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { z } from "zod";
import { HttpError } from "../src/http-error";
import { readJson } from "../src/validate";

const schema = z.strictObject({ name: z.string(), n: z.number().optional() });
let server: ReturnType<typeof serve>;
let port = 0;

beforeAll(async () => {
  const app = new Hono();
  app.onError((err, c) => c.json({ detail: err.message }, err instanceof HttpError ? (err.status as 400) : 500));
  app.post("/echo", async (c) => c.json(await readJson(c, schema, 64)));
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      port = info.port;
      resolve();
    });
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Send raw HTTP/1.1 `parts` (with `gapMs` between them) and return the status line and body. */
function raw(parts: string[], gapMs = 0): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (d) => (data += d.toString("utf8")));
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    socket.on("error", reject);
    socket.on("connect", async () => {
      for (const [i, p] of parts.entries()) {
        if (i && gapMs) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(p);
      }
    });
  });
}

const head = (extra: string) => `POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe("readJson", () => {
  it("reads a body sent with its headers", async () => {
    const body = JSON.stringify({ name: "deer", n: 1 });
    const r = await raw([head(`Content-Length: ${Buffer.byteLength(body)}\r\n`) + body]);
    expect(r).toEqual({ status: 200, body: body });
  });

  it("reads a body still arriving when the handler runs", async () => {
    const body = JSON.stringify({ name: "slow" });
    const r = await raw([head(`Content-Length: ${Buffer.byteLength(body)}\r\n`) + body.slice(0, 5), body.slice(5)], 40);
    expect(r).toEqual({ status: 200, body });
  });

  it("reads a chunked body", async () => {
    const body = JSON.stringify({ name: "chunks" });
    const a = body.slice(0, 4);
    const b = body.slice(4);
    const chunked = `${a.length.toString(16)}\r\n${a}\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
    const r = await raw([head("Transfer-Encoding: chunked\r\n") + chunked]);
    expect(r).toEqual({ status: 200, body });
  });

  it("keeps multi-byte UTF-8 intact", async () => {
    const body = JSON.stringify({ name: "鹿流 🦌" });
    const r = await raw([head(`Content-Length: ${Buffer.byteLength(body)}\r\n`) + body]);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ name: "鹿流 🦌" });
  });

  it("answers malformed JSON with 422 and an oversized body with 413 (declared or chunked)", async () => {
    const bad = '{"name": ';
    expect((await raw([head(`Content-Length: ${bad.length}\r\n`) + bad])).status).toBe(422);
    const big = JSON.stringify({ name: "x".repeat(100) });
    expect((await raw([head(`Content-Length: ${big.length}\r\n`) + big])).status).toBe(413);
    const chunked = `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    expect((await raw([head("Transfer-Encoding: chunked\r\n") + chunked])).status).toBe(413);
  });

  it("an in-process request that declares less than it carries still gets a 413", async () => {
    const app = new Hono();
    app.onError((err, c) => c.json({ detail: err.message }, err instanceof HttpError ? (err.status as 400) : 500));
    app.post("/echo", async (c) => c.json(await readJson(c, schema, 64)));
    const big = JSON.stringify({ name: "x".repeat(100) });
    const res = await app.request("/echo", { method: "POST", body: big, headers: { "content-length": "20", "content-type": "application/json" } });
    expect(res.status).toBe(413);
    const ok = await app.request("/echo", { method: "POST", body: '{"name":"a"}', headers: { "content-length": "12", "content-type": "application/json" } });
    expect(await ok.json()).toEqual({ name: "a" });
  });
});
