import fs from "node:fs";
import path from "node:path";
import { createAgent, createThreadDataMiddleware, threadStateSchema } from "@deerflow-ts/harness";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../../src/gateway";
import { HttpError } from "../../src/http-error";
import { HostPathMasker } from "../../src/security";
import { echoTool, humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

/** Every spelling of the data dir a response could leak (the temp dir may sit behind a symlink). */
function hostSpellings(dir: string): string[] {
  return [...new Set([path.resolve(dir), fs.realpathSync(dir)])];
}

describe("host paths never leave the server", () => {
  let gw: TestGateway;
  let spellings: string[];
  const leaks = (text: string) => spellings.filter((s) => text.includes(s));

  beforeAll(async () => {
    gw = await startTestGateway({
      steps: ["Done."],
      agentFactory: () =>
        createAgent({
          model: gw.model,
          tools: [echoTool],
          checkpointer: gw.checkpointer,
          stateSchema: threadStateSchema,
          name: "lead_agent",
          // the harness keeps the thread's host directories in state for its own file handling
          middleware: [createThreadDataMiddleware({ base_dir: gw.dataDir, lazy_init: false })],
        }),
    });
    spellings = hostSpellings(gw.dataDir);
  });
  afterAll(async () => gw.close());

  it("upload responses, listings, state, history, thread detail, streams and wait answers show virtual paths only", async () => {
    const bodies: Array<[string, string]> = [];
    const grab = async (what: string, res: Response | Promise<Response>) => {
      const r = await res;
      const text = await r.text();
      expect(r.status, `${what}: ${text}`).toBeLessThan(300);
      bodies.push([what, text]);
      return text;
    };
    const form = new FormData();
    form.append("files", new Blob(["hello"]), "notes.txt");
    const up = JSON.parse(await grab("upload", fetch(`${gw.url}/api/threads/hp-1/uploads`, { method: "POST", body: form })));
    expect(up.files[0]).toMatchObject({ path: "/mnt/user-data/uploads/notes.txt", virtual_path: "/mnt/user-data/uploads/notes.txt" });
    await grab("uploads/list", fetch(`${gw.url}/api/threads/hp-1/uploads/list`));

    await grab("create", postJson(`${gw.url}/api/threads`, { thread_id: "hp-1" }));
    const stream = await grab(
      "runs/stream",
      postJson(`${gw.url}/api/threads/hp-1/runs/stream`, { assistant_id: "lead_agent", input: humanInput("hi"), stream_mode: ["values", "updates", "checkpoints", "debug", "tasks"] }),
    );
    expect(stream).toContain("/mnt/user-data/workspace");
    // the checkpoint really holds the host directories: the masking, not their absence, keeps them out
    const snap = await gw.gateway.runtime.readState("hp-1");
    expect(JSON.stringify(snap?.values.thread_data)).toContain(spellings[0]);

    const state = JSON.parse(await grab("state", fetch(`${gw.url}/api/threads/hp-1/state`)));
    expect(state.values.thread_data).toEqual({
      workspace_path: "/mnt/user-data/workspace",
      uploads_path: "/mnt/user-data/uploads",
      outputs_path: "/mnt/user-data/outputs",
    });
    await grab("history", postJson(`${gw.url}/api/threads/hp-1/history`, { limit: 10 }));
    await grab("thread", fetch(`${gw.url}/api/threads/hp-1`));
    await grab("runs/wait", postJson(`${gw.url}/api/threads/hp-1/runs/wait`, { assistant_id: "lead_agent", input: humanInput("again") }));
    // the LangGraph SDK sees the same
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    bodies.push(["sdk getState", JSON.stringify(await client.threads.getState("hp-1"))]);
    for (const [what, text] of bodies) expect(leaks(text), what).toEqual([]);
  });

  it("error details are rewritten to virtual paths by the gateway's error handler", async () => {
    // a fresh gateway: a route can be added only before the first request
    const other = await createGateway({ dataDir: gw.dataDir, checkpointer: gw.checkpointer, webDistDir: null, log: () => undefined, agentFactory: () => createAgent({ model: gw.model }) });
    try {
      const userData = path.join(gw.dataDir, "users", "default", "threads", "hp-1", "user-data");
      other.app.get("/api/test-boom", () => {
        throw new HttpError(400, { message: `cannot open '${userData}/outputs/x.skill'`, findings: [`${gw.dataDir}/skills/custom/y`] });
      });
      const res = await other.app.request("/api/test-boom");
      const text = await res.text();
      expect(leaks(text)).toEqual([]);
      expect(JSON.parse(text).detail).toEqual({ message: "cannot open '/mnt/user-data/outputs/x.skill'", findings: ["<data dir>/skills/custom/y"] });
    } finally {
      await other.close();
    }
  });

  it("a run's error names virtual paths in the stream and the run record", async () => {
    const failing = await startTestGateway({ steps: [] });
    try {
      const hostFile = path.join(failing.dataDir, "users", "default", "threads", "hp-err", "user-data", "outputs", "a.md");
      // the scripted model fails with a message naming a host file, as a tool or provider error could
      failing.model.push({ error: { kind: "bad_request", message: `cannot read ${hostFile}` } });
      await postJson(`${failing.url}/api/threads`, { thread_id: "hp-err" });
      const stream = await (await postJson(`${failing.url}/api/threads/hp-err/runs/stream`, { assistant_id: "lead_agent", input: humanInput("hi") })).text();
      const runs = await (await fetch(`${failing.url}/api/threads/hp-err/runs`)).text();
      const mine = hostSpellings(failing.dataDir);
      for (const text of [stream, runs]) for (const s of mine) expect(text).not.toContain(s);
      expect(stream).toContain("event: error");
      expect(runs).toContain('"status":"error"');
    } finally {
      await failing.close();
    }
  });

  it("the masker leaves lookalike paths alone", () => {
    const m = new HostPathMasker(["/srv/deer"]);
    expect(m.maskText("/srv/deer/users/u1/threads/t1/user-data/outputs/a.md")).toBe("/mnt/user-data/outputs/a.md");
    expect(m.maskText("at /srv/deer: gone")).toBe("at <data dir>: gone");
    expect(m.maskText("/srv/deerfield/x")).toBe("/srv/deerfield/x");
    expect(m.maskText("/srv/deer-old/x and /srv/deer2")).toBe("/srv/deer-old/x and /srv/deer2");
  });

  it("the masker also rewrites a path that ends a sentence, a list or a bracket", () => {
    const m = new HostPathMasker(["/srv/deer"]);
    expect(m.maskText("The thread quota is exceeded in /srv/deer/users/u1/threads/t1/user-data.")).toBe("The thread quota is exceeded in /mnt/user-data.");
    expect(m.maskText("No space left under /srv/deer.")).toBe("No space left under <data dir>.");
    for (const end of ["]", "}", ">", "!", "?", "|", "\u00a0", "\u201d"]) {
      const text = m.maskText(`paths [/srv/deer${end} /srv/deer/users/u/threads/t/user-data${end}`);
      expect(text, JSON.stringify(end)).not.toContain("/srv/deer");
    }
  });
});
