/**
 * Rows stored without an owner (an empty `user_id`) and checkpoints of a
 * thread id that has no row: whose are they? The auth-disabled user's
 * (`default`). With sign-in off they answer as before; with sign-in on no
 * account has that id, so they are nobody's (404), not everybody's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";
import { authOn, initializeAdmin, Session } from "./signed-in";

const OWNERLESS = "legacy-thread-without-owner";
const ROWLESS = "legacy-checkpoint-without-row";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** A thread row with no owner (and a checkpoint), and a checkpointed thread id with no row at all. */
async function plantLegacy(g: TestGateway): Promise<void> {
  const ts = new Date().toISOString();
  await g.gateway.stores.threads.create({ threadId: OWNERLESS, userId: "", status: "idle", metadata: { legacy: true }, displayName: "old", createdAt: ts, updatedAt: ts });
  await g.gateway.runtime.updateState(OWNERLESS, { title: "ownerless" });
  await g.gateway.runtime.updateState(ROWLESS, { title: "rowless" });
}

const READS = [`/threads/${OWNERLESS}`, `/threads/${OWNERLESS}/state`, `/threads/${ROWLESS}`, `/threads/${ROWLESS}/state`, `/threads/${ROWLESS}/runs`, `/threads/${ROWLESS}/messages/page`];

describe("ownerless rows and rowless checkpoints", () => {
  it("belong to the auth-disabled user: readable with sign-in off", async () => {
    gw = await startTestGateway();
    await plantLegacy(gw);
    const s = new Session(`${gw.url}/api`);
    for (const route of READS) expect([route, (await s.send("GET", route)).status]).toEqual([route, 200]);
    expect((await s.json("GET", `/threads/${OWNERLESS}/state`)).values.title).toBe("ownerless");
    expect((await s.json("POST", `/threads/${ROWLESS}/history`, {})).length).toBeGreaterThan(0);
    // the owner may give such a thread its row
    expect((await s.json("POST", "/threads", { thread_id: ROWLESS })).thread_id).toBe(ROWLESS);
  });

  it("are nobody's with sign-in on: 404 for a signed-in admin, never listed", async () => {
    gw = await startTestGateway({ auth: authOn() });
    await plantLegacy(gw);
    const admin = await initializeAdmin(`${gw.url}/api`, "root@example.com", "Legacy-Pass-42");
    for (const route of READS) expect([route, (await admin.send("GET", route)).status]).toEqual([route, 404]);
    expect((await admin.send("POST", `/threads/${ROWLESS}/history`, {})).status).toBe(404);
    expect((await admin.send("PATCH", `/threads/${OWNERLESS}`, { metadata: { mine: true } })).status).toBe(404);
    expect((await admin.send("DELETE", `/threads/${OWNERLESS}`)).status).toBe(404);
    expect(await admin.json("POST", "/threads/search", {})).toEqual([]);
    // nor can a row be made for the checkpoints stored without one (which would hand them over)
    expect((await admin.send("POST", "/threads", { thread_id: ROWLESS })).status).toBe(409);
    expect((await admin.send("POST", "/runs/wait", { input: { messages: [] }, config: { configurable: { thread_id: ROWLESS } } })).status).toBe(404);
    expect((await admin.send("GET", `/threads/${ROWLESS}/state`)).status).toBe(404);
    expect(await gw.gateway.stores.threads.get(ROWLESS)).toBeUndefined();
    // and the row is still there, unchanged
    expect((await gw.gateway.stores.threads.get(OWNERLESS))?.metadata).toEqual({ legacy: true });
  });
});
