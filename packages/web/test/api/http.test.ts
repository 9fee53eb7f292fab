import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiFetch, failure, readCookie } from "../../src/api/http";
import type { UnauthorizedEvent } from "../../src/api/http";

/** A real loopback server that answers 401 on /private and records what each request carried. */
function recordingServer() {
  const seen: Array<{ method: string; url: string; csrf: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", csrf: req.headers["x-csrf-token"] as string | undefined });
    if (req.url?.startsWith("/private")) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: { code: "not_authenticated", message: "Authentication required" } }));
      return;
    }
    if (req.url === "/locked") {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "300" });
      res.end(JSON.stringify({ detail: "Too many login attempts" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
  });
  return {
    seen,
    async start(): Promise<string> {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const own = recordingServer();
const other = recordingServer();
let ownUrl = "";
let otherUrl = "";

beforeAll(async () => {
  ownUrl = await own.start();
  otherUrl = await other.start();
});
afterAll(async () => {
  await own.close();
  await other.close();
});

function apiFetchWith(cookies: string, unauthorized: UnauthorizedEvent[]) {
  return createApiFetch({ cookies: () => cookies, origin: () => ownUrl, onUnauthorized: (e) => unauthorized.push(e) });
}

describe("apiFetch: CSRF on writes", () => {
  it("every POST/PUT/PATCH/DELETE to the UI's origin carries X-CSRF-Token = the csrf_token cookie; GET does not", async () => {
    const f = apiFetchWith("theme=dark; csrf_token=abc%2F123; other=1", []);
    own.seen.length = 0;
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "post"]) await f(`${ownUrl}/api/x`, { method });
    expect(own.seen.map((s) => [s.method, s.csrf])).toEqual([
      ["GET", undefined],
      ["POST", "abc/123"],
      ["PUT", "abc/123"],
      ["PATCH", "abc/123"],
      ["DELETE", "abc/123"],
      ["POST", "abc/123"],
    ]);
  });

  it("the method of a Request object counts too", async () => {
    const f = apiFetchWith("csrf_token=tok", []);
    own.seen.length = 0;
    await f(new Request(`${ownUrl}/api/y`, { method: "DELETE" }));
    expect(own.seen[0]).toMatchObject({ method: "DELETE", csrf: "tok" });
  });

  it("the token never goes to another origin", async () => {
    const f = apiFetchWith("csrf_token=secret-token", []);
    other.seen.length = 0;
    await f(`${otherUrl}/collect`, { method: "POST" });
    expect(other.seen).toEqual([{ method: "POST", url: "/collect", csrf: undefined }]);
  });

  it("no cookie (auth disabled) → no header", async () => {
    const f = apiFetchWith("theme=dark", []);
    own.seen.length = 0;
    await f(`${ownUrl}/api/z`, { method: "POST" });
    expect(own.seen[0].csrf).toBeUndefined();
  });

  it("reads cookies exactly by name", () => {
    expect(readCookie("csrf_token", "xcsrf_token=no; csrf_token=yes")).toBe("yes");
    expect(readCookie("csrf_token", "a=1")).toBeUndefined();
  });
});

describe("apiFetch: 401 leads to the login page", () => {
  it("a 401 calls the handler with the request; a 200 does not", async () => {
    const events: UnauthorizedEvent[] = [];
    const f = apiFetchWith("", events);
    await f(`${ownUrl}/api/ok`);
    expect(events).toEqual([]);
    const res = await f(`${ownUrl}/private/threads`, { method: "POST" });
    expect(res.status).toBe(401);
    expect(events).toEqual([{ url: `${ownUrl}/private/threads`, method: "POST" }]);
  });

  it("a caller that handles 401 itself (login form, start-up probe) is not redirected", async () => {
    const events: UnauthorizedEvent[] = [];
    const f = apiFetchWith("", events);
    const res = await f(`${ownUrl}/private/login`, { method: "POST" }, { allowUnauthorized: true });
    expect(res.status).toBe(401);
    expect(events).toEqual([]);
  });

  it("a 401 from another origin is not this site's session ending", async () => {
    const events: UnauthorizedEvent[] = [];
    await apiFetchWith("", events)(`${otherUrl}/private`);
    expect(events).toEqual([]);
  });

  it("failure() keeps detail.code, the message and Retry-After", async () => {
    const f = apiFetchWith("", []);
    const e401 = await failure(await f(`${ownUrl}/private/x`, {}, { allowUnauthorized: true }));
    expect([e401.status, e401.code, e401.message]).toEqual([401, "not_authenticated", "Authentication required"]);
    const e429 = await failure(await f(`${ownUrl}/locked`));
    expect([e429.status, e429.message, e429.retryAfterSeconds]).toEqual([429, "Too many login attempts", 300]);
  });
});
