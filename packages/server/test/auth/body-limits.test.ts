import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initializeAdmin, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway } from "../helpers/auth-session";

/**
 * POST a body of unannounced length (chunked, no Content-Length) that keeps
 * coming until the gateway answers or `bound` bytes were sent. Says whether
 * the answer came while the body was still being sent: a gateway that
 * buffers a whole body before checking its size answers only after the end.
 */
function endlessPost(url: string, contentType: string, bound = 48 * 1024 * 1024): Promise<{ status: number; answeredMidBody: boolean }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let ended = false;
    let answered = false;
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers: { "content-type": contentType, "transfer-encoding": "chunked" } },
      (res) => {
        answered = true;
        res.resume();
        const midBody = !ended;
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode!, answeredMidBody: midBody });
        });
      },
    );
    req.on("error", (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(256 * 1024, "a");
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < bound) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) {
        ended = true;
        req.end();
      }
    };
    pump();
  });
}

describe("auth bodies are capped while they arrive (unauthenticated routes)", () => {
  let gw: AuthGateway;
  beforeAll(async () => {
    gw = await startAuthGateway({ authSection: { registration_enabled: true } });
    await initializeAdmin(gw.api);
  });
  afterAll(async () => {
    await gw.close();
  });

  for (const [route, type] of [
    ["/v1/auth/login/local", "application/x-www-form-urlencoded"],
    ["/v1/auth/login/local", "multipart/form-data; boundary=XBOUNDARY"],
    ["/v1/auth/register", "application/json"],
    ["/v1/auth/initialize", "application/json"],
  ] as const) {
    it(`${route} (${type.split(";")[0]}) without Content-Length is 413 before the body ends`, async () => {
      const r = await endlessPost(`${gw.api}${route}`, type);
      expect(r.status).toBe(413);
      expect(r.answeredMidBody).toBe(true);
    });
  }

  it("a multipart login form within the limit still signs in", async () => {
    const form = new FormData();
    form.set("username", "admin@example.com");
    form.set("password", "correct-horse-battery");
    const res = await fetch(`${gw.api}/v1/auth/login/local`, { method: "POST", body: form });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().some((l) => l.startsWith("access_token="))).toBe(true);
  });
});
