import { describe, expect, it } from "vitest";
import { createRequestFetch } from "../../src/models";

type Seen = { body: Record<string, unknown>; headers: Record<string, string> };

/** A base fetch that records what would have gone on the wire. */
function recorder(): { fetch: typeof globalThis.fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetch = (async (_input: unknown, init?: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    seen.push({ body: JSON.parse(String(init?.body)) as Record<string, unknown>, headers });
    return new Response("{}");
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

describe("createRequestFetch", () => {
  it("deep-merges its bound fields into a JSON body and leaves the headers alone", async () => {
    const { fetch, seen } = recorder();
    const f = createRequestFetch({ top_p: 0.9, extra: { a: 1 } }, fetch);
    await f("http://x/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", extra: { c: 3 } }) });
    expect(seen[0].body).toEqual({ model: "m", top_p: 0.9, extra: { a: 1, c: 3 } });
    expect(seen[0].headers).toEqual({ "content-type": "application/json" });
  });

  it("two fetches with different fields stay apart under concurrency (the fields are bound, not carried)", async () => {
    const { fetch, seen } = recorder();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => createRequestFetch({ call: i }, fetch)("http://x", { method: "POST", body: JSON.stringify({ n: i }) })),
    );
    for (const s of seen) expect(s.body.call).toBe(s.body.n);
    expect(seen).toHaveLength(20);
  });

  it("adds nothing when there is nothing to add; a body that is not JSON goes unchanged", async () => {
    const sent: Array<RequestInit | undefined> = [];
    const base = (async (_i: unknown, init?: RequestInit) => (sent.push(init), new Response("{}"))) as typeof globalThis.fetch;
    expect(createRequestFetch({}, base)).toBe(base);
    await createRequestFetch({ top_p: 1 }, base)("http://x", { method: "POST", body: "not json" });
    expect(sent[0]?.body).toBe("not json");
  });
});
