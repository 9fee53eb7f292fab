import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAgent, threadPaths, threadStateSchema } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("thread access: one load-and-authorise per /threads/:id request", () => {
  it("a thread owned by another user is 404 on every sub-resource (state, checkpoint state, history, runs, uploads, artifacts, transcript)", async () => {
    gw = await startTestGateway({ steps: ["mine"] });
    const tid = ((await (await postJson(`${gw.url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
    await (await postJson(`${gw.url}/api/threads/${tid}/runs/wait`, { input: humanInput("hello") })).json();
    const state = (await (await fetch(`${gw.url}/api/threads/${tid}/state`)).json()) as { checkpoint: { checkpoint_id: string } };
    const cp = state.checkpoint.checkpoint_id;
    const outputs = threadPaths(gw.dataDir, "default", tid).outputs;
    fs.mkdirSync(outputs, { recursive: true });
    fs.writeFileSync(path.join(outputs, "secret.md"), "# secret");
    const checks: Array<[string, string]> = [
      ["GET", `/api/threads/${tid}`],
      ["GET", `/api/threads/${tid}/state`],
      ["GET", `/api/threads/${tid}/state/${cp}`],
      ["POST", `/api/threads/${tid}/history`],
      ["GET", `/api/threads/${tid}/runs`],
      ["GET", `/api/threads/${tid}/uploads/list`],
      ["GET", `/api/threads/${tid}/artifacts/mnt/user-data/outputs/secret.md`],
      ["GET", `/api/threads/${tid}/messages/page`],
      ["DELETE", `/api/threads/${tid}`],
    ];
    // While the caller owns the thread, every route answers.
    for (const [method, route] of checks.filter(([m]) => m !== "DELETE")) {
      const r = await fetch(`${gw.url}${route}`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) });
      expect([route, r.status]).toEqual([route, 200]);
    }
    // Hand the row to someone else: the same requests now see no such thread.
    await gw.gateway.stores.threads.update(tid, { userId: "someone-else" } as never);
    const row = await gw.gateway.stores.threads.get(tid);
    if (row?.userId !== "someone-else") {
      // The store keeps owners immutable: re-create the row under another owner.
      await gw.gateway.stores.threads.delete(tid);
      await gw.gateway.stores.threads.create({ ...row!, userId: "someone-else" });
    }
    for (const [method, route] of checks) {
      const r = await fetch(`${gw.url}${route}`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) });
      expect([route, r.status]).toEqual([route, 404]);
    }
    expect(fs.existsSync(path.join(outputs, "secret.md"))).toBe(true);
  });

  it("deleting a thread on a gateway without an explicit checkpointer really removes its state", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-del-"));
    const model = new ScriptedModel(["answer"]);
    // No `checkpointer` option: the agents get the runtime's own one from the build request.
    const gateway = await createGateway({
      dataDir,
      webDistDir: null,
      log: () => undefined,
      agentFactory: ({ checkpointer }) => createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    const url = await gateway.start({ port: 0 });
    try {
      const tid = ((await (await postJson(`${url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
      await (await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("hello") })).json();
      expect((await fetch(`${url}/api/threads/${tid}/state`)).status).toBe(200);
      const del = await fetch(`${url}/api/threads/${tid}`, { method: "DELETE" });
      expect(del.status).toBe(200);
      expect((await fetch(`${url}/api/threads/${tid}/state`)).status).toBe(404);
      expect((await fetch(`${url}/api/threads/${tid}`)).status).toBe(404);
      expect(await gateway.runtime.readState(tid)).toBeUndefined();
    } finally {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
