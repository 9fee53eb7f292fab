import { describe, expect, it } from "vitest";
import { createRequestFetch, extraBodyHeaders } from "../../src/models";

type Seen = { body: Record<string, unknown>; headers: Record<string, string> };

/** A base fetch that records what would have gone on the wire. */
function recorder(): { fetch: typeof globalThis.fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetch = (async (_input: unknown, init?: RequestInit) => {
    await new Promise((r) => setTimeout(r, Math.random() * 5)); // concurrent calls overlap
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    seen.push({ body: JSON.parse(String(init?.body)) as Record<string, unknown>, headers });
    return new Response("{}");
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

describe("createRequestFetch + extraBodyHeaders", () => {
  it("merges a call's extra body into its JSON body and never sends the carrier header", async () => {
    const { fetch, seen } = recorder();
    const f = createRequestFetch({ top_p: 0.9, extra: { a: 1 } }, fetch);
    const headers = { "content-type": "application/json", ...extraBodyHeaders({ thinking: { type: "enabled" }, extra: { b: 2 } }) };
    await f("http://x/v1/chat/completions", { method: "POST", headers, body: JSON.stringify({ model: "m", extra: { c: 3 } }) });
    expect(seen[0].body).toEqual({ model: "m", top_p: 0.9, extra: { a: 1, b: 2, c: 3 }, thinking: { type: "enabled" } });
    expect(seen[0].headers).toEqual({ "content-type": "application/json" });
  });

  it("reads the carrier from Headers and header arrays too", async () => {
    const { fetch, seen } = recorder();
    const f = createRequestFetch({}, fetch);
    const carrier = extraBodyHeaders({ k: "v" })!;
    const [name, value] = Object.entries(carrier)[0];
    await f("http://x", { method: "POST", headers: new Headers({ "x-api": "1", [name]: value }), body: "{}" });
    await f("http://x", { method: "POST", headers: [["x-api", "2"], [name.toUpperCase(), value]], body: "{}" });
    expect(seen.map((s) => s.body)).toEqual([{ k: "v" }, { k: "v" }]);
    expect(seen.map((s) => s.headers)).toEqual([{ "x-api": "1" }, { "x-api": "2" }]);
  });

  it("keeps concurrent calls apart: each request gets its own call's fields", async () => {
    const { fetch, seen } = recorder();
    const f = createRequestFetch({}, fetch);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => f("http://x", { method: "POST", headers: extraBodyHeaders({ call: i }), body: JSON.stringify({ n: i }) })),
    );
    for (const s of seen) expect(s.body.call).toBe(s.body.n);
    expect(seen).toHaveLength(20);
  });

  it("adds nothing when there is nothing to add; a body that is not JSON goes unchanged", async () => {
    expect(extraBodyHeaders(undefined)).toBeUndefined();
    expect(extraBodyHeaders({})).toBeUndefined();
    const sent: Array<RequestInit | undefined> = [];
    const f = createRequestFetch({ top_p: 1 }, (async (_i: unknown, init?: RequestInit) => (sent.push(init), new Response("{}"))) as typeof globalThis.fetch);
    await f("http://x", { method: "POST", body: "not json" });
    expect(sent[0]?.body).toBe("not json");
  });
});
