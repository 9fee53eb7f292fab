import type { Checkpointer, CheckpointStore } from "@deerflow-ts/harness";
/**
 * Conformance: the gateway (HTTP) and the embedded DeerFlowClient, pointed at
 * the same data dir, must answer with the same JSON — the same models, the
 * same upload records, the same artifact bytes/MIME type, the same threads
 * (whoever created them) and the same failures.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, createAgent, DeerFlowClient, PathAccessError, SqliteCheckpointStore, threadStateSchema } from "@deerflow-ts/harness";
import type { AgentFactory, AppConfig, ThreadResponse, UploadError, UploadListResponse, UploadResponse } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { servedFile } from "../../src/security";
import { humanInput, postJson } from "../helpers/test-gateway";

const CONFIG = `config_version: 34
models:
  - name: gpt-test
    display_name: GPT Test
    description: A scripted test model
    use: langchain_openai:ChatOpenAI
    model: gpt-4o-mini
    api_key: $CONFORMANCE_KEY
    supports_thinking: true
  - name: plain
    use: langchain_openai:ChatOpenAI
    model: m2
    api_key: sk-literal-secret
    supports_reasoning_effort: true
token_usage:
  enabled: false
uploads:
  max_files: 3
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
`;

let dataDir: string;
let appConfig: AppConfig;
let gateway: Gateway;
let url: string;
let client: DeerFlowClient;
let gwCheckpointer: SqliteCheckpointStore;

/** Each side builds its own agents over its own checkpoint handle on the shared SQLite file. */
function scriptedAgent(script: string[], checkpointer: SqliteCheckpointStore | undefined) {
  const model = new ScriptedModel(script);
  return (cp: CheckpointStore | Checkpointer) => createAgent({ model, checkpointer: checkpointer ?? cp, stateSchema: threadStateSchema, name: "lead_agent" });
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "df-conformance-"));
  appConfig = appConfigFromText(CONFIG, { env: { CONFORMANCE_KEY: "sk-from-env" } }).config;
  fs.mkdirSync(path.join(dataDir, "data"), { recursive: true });
  // the same checkpoint file the client (and `deerflow serve`) use: {dataDir}/data/deerflow.db
  gwCheckpointer = new SqliteCheckpointStore(path.join(dataDir, "data", "deerflow.db"));
  const gwAgent = scriptedAgent(["Gateway answer."], gwCheckpointer);
  gateway = await createGateway({ dataDir, appConfig, checkpointer: gwCheckpointer, webDistDir: null, log: () => undefined, agentFactory: () => gwAgent(gwCheckpointer) });
  url = await gateway.start({ port: 0 });
  const clientAgent = scriptedAgent(["Client answer."], undefined);
  const factory: AgentFactory = ({ checkpointer }) => clientAgent(checkpointer);
  client = new DeerFlowClient({ dataDir, appConfig, agentFactory: factory });
});

afterAll(async () => {
  await client?.close();
  await gateway?.close();
  await gwCheckpointer?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function getJson<T>(p: string): Promise<T> {
  const r = await fetch(`${url}${p}`);
  expect(r.status, p).toBe(200);
  return (await r.json()) as T;
}

function form(files: Array<[string, string]>): FormData {
  const fd = new FormData();
  for (const [name, body] of files) fd.append("files", new Blob([body]), name);
  return fd;
}

/** Thread-independent view of an upload record (path/url/mtime differ by thread and by write). */
function portable(threadId: string, files: UploadResponse["files"]) {
  return files.map(({ modified, ...f }) => {
    expect(typeof modified).toBe("number");
    return JSON.parse(JSON.stringify(f).split(threadId).join("<thread>"));
  });
}

describe("client vs gateway on one data dir", () => {
  it("GET /api/models equals client.listModels() (no secrets on either side)", async () => {
    const viaHttp = await getJson<unknown>("/api/models");
    expect(viaHttp).toEqual(client.listModels());
    expect(viaHttp).toEqual({
      models: [
        { name: "gpt-test", model: "gpt-4o-mini", display_name: "GPT Test", description: "A scripted test model", supports_thinking: true, supports_reasoning_effort: false },
        { name: "plain", model: "m2", display_name: null, description: null, supports_thinking: false, supports_reasoning_effort: true },
      ],
      token_usage: { enabled: false },
    });
    expect(JSON.stringify(viaHttp)).not.toMatch(/sk-|api_key|CONFORMANCE/);
    expect(await getJson("/api/models/plain")).toEqual(client.listModels().models[1]);
  });

  it("uploads: same records, same listing of each other's files, same limits and errors", async () => {
    const src = fs.mkdtempSync(path.join(os.tmpdir(), "df-conf-src-"));
    const files: Array<[string, string]> = [["notes.md", "# Notes\n"], ["data.csv", "a,b\n1,2\n"]];
    for (const [n, body] of files) fs.writeFileSync(path.join(src, n), body);
    // the same two files into a gateway thread and a client thread
    const r = await fetch(`${url}/api/threads/up-gw/uploads`, { method: "POST", body: form(files) });
    expect(r.status).toBe(200);
    const viaHttp = (await r.json()) as UploadResponse;
    const viaClient = await client.uploadFiles("up-cl", files.map(([n]) => path.join(src, n)));
    expect({ ...viaHttp, files: portable("up-gw", viaHttp.files) }).toEqual({ ...viaClient, files: portable("up-cl", viaClient.files) });
    // each side lists the other's uploads identically (same file, same stat)
    for (const t of ["up-gw", "up-cl"]) {
      const listed = await getJson<UploadListResponse>(`/api/threads/${t}/uploads/list`);
      expect(listed).toEqual(await client.listUploads(t));
      expect(listed.count).toBe(2);
    }
    // re-uploading an existing name replaces it on both sides (no _N across requests)
    const again = (await (await fetch(`${url}/api/threads/up-cl/uploads`, { method: "POST", body: form([["notes.md", "# v2\n"]]) })).json()) as UploadResponse;
    expect(again.files.map((f) => f.filename)).toEqual(["notes.md"]);
    expect((await client.getArtifact("up-cl", "/mnt/user-data/uploads/notes.md")).bytes.toString()).toBe("# v2\n");
    // limits come from the same config: the gateway's 413 detail is the client's error message
    expect(await getJson("/api/threads/up-gw/uploads/limits")).toEqual({ max_files: 3, max_file_size: 52428800, max_total_size: 104857600 });
    const four = ["a", "b", "c", "d"].map((n) => {
      fs.writeFileSync(path.join(src, n), n);
      return path.join(src, n);
    });
    const tooMany = await fetch(`${url}/api/threads/up-gw/uploads`, { method: "POST", body: form(["a", "b", "c", "d"].map((n) => [n, n])) });
    expect(tooMany.status).toBe(413);
    const err = (await client.uploadFiles("up-gw", four).catch((e: unknown) => e)) as UploadError;
    expect(err.status).toBe(413);
    expect(((await tooMany.json()) as { detail: string }).detail).toBe(err.message);
    // hidden / traversal names behave alike
    const hidden = (await (await fetch(`${url}/api/threads/up-gw/uploads`, { method: "POST", body: form([[".env", "X=1"], ["../../escape.txt", "e"]]) })).json()) as UploadResponse;
    fs.writeFileSync(path.join(src, ".env"), "X=1");
    const hiddenClient = await client.uploadFiles("up-cl", [path.join(src, ".env")]);
    expect(hidden.skipped_files).toEqual([".env"]);
    expect(hiddenClient.skipped_files).toEqual([".env"]);
    expect(hidden.files.map((f) => f.filename)).toEqual(["escape.txt"]);
    expect(fs.existsSync(path.join(dataDir, "users", "default", "threads", "escape.txt"))).toBe(false);
    // deletion through one side is seen by the other
    expect(await (await fetch(`${url}/api/threads/up-cl/uploads/data.csv`, { method: "DELETE" })).json()).toEqual({ success: true, message: "Deleted data.csv" });
    expect((await client.listUploads("up-cl")).files.map((f) => f.filename)).toEqual(["notes.md"]);
    fs.rmSync(src, { recursive: true, force: true });
  });

  it("artifacts: same bytes and MIME type; same refusals", async () => {
    const out = client.threadPaths("art").outputs;
    fs.mkdirSync(out, { recursive: true });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    fs.writeFileSync(path.join(out, "report.md"), "# Report\n");
    fs.writeFileSync(path.join(out, "chart.png"), png);
    fs.writeFileSync(path.join(out, "notes.weird"), "plain words");
    fs.writeFileSync(path.join(out, "blob.bin2"), Buffer.from([0, 1, 2, 255]));
    fs.writeFileSync(path.join(out, "données é.txt"), "unicode name");
    fs.writeFileSync(path.join(dataDir, "secret.txt"), "TOP SECRET");
    fs.symlinkSync(path.join(dataDir, "secret.txt"), path.join(out, "link.txt"));
    for (const name of ["report.md", "chart.png", "notes.weird", "blob.bin2", "données é.txt"]) {
      const virtual = `/mnt/user-data/outputs/${name}`;
      const r = await fetch(`${url}/api/threads/art/artifacts/mnt/user-data/outputs/${encodeURIComponent(name)}`);
      expect(r.status, name).toBe(200);
      const mine = await client.getArtifact("art", virtual);
      expect(Buffer.from(await r.arrayBuffer())).toEqual(mine.bytes);
      // the gateway serves the client's type made safe for a browser (text as text/plain, unknown as an attachment)
      expect(r.headers.get("content-type")).toBe(servedFile(mine.mimeType, false).contentType);
    }
    expect((await client.getArtifact("art", "/mnt/user-data/outputs/blob.bin2")).mimeType).toBe("application/octet-stream");
    // refusals: symlink escape → 403 / PathAccessError; missing → 404; outside user-data → 400
    const refused = async (rel: string, status: number) => {
      const r = await fetch(`${url}/api/threads/art/artifacts/${rel}`);
      expect(r.status, rel).toBe(status);
      expect(await r.text()).not.toContain("TOP SECRET");
      const e = (await client.getArtifact("art", `/${decodeURIComponent(rel)}`).catch((x: unknown) => x)) as Error & { status?: number };
      if (status === 403) expect(e).toBeInstanceOf(PathAccessError);
      else expect(e.status).toBe(status);
      return e;
    };
    await refused("mnt/user-data/outputs/link.txt", 403);
    await refused("mnt/user-data/outputs/..%2F..%2F..%2F..%2F..%2F..%2Fsecret.txt", 403);
    await refused("mnt/user-data/outputs/missing.txt", 404);
    await refused("etc/passwd", 400);
    // an unencoded ../ never reaches a file either (raw request: fetch would normalise it)
    const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = http.request({ host: u.hostname, port: u.port, path: "/api/threads/art/artifacts/mnt/user-data/outputs/../../../../../../secret.txt" }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(raw.status).toBeGreaterThanOrEqual(400);
    expect(raw.body).not.toContain("TOP SECRET");
  });

  it("threads: GET /threads/{id} and /threads/search equal getThread/listThreads, whoever created the thread", async () => {
    // one thread through the gateway (create + run), one through the client
    expect((await postJson(`${url}/api/threads`, { thread_id: "th-gw", metadata: { origin: "gateway" } })).status).toBe(200);
    const waited = await postJson(`${url}/api/threads/th-gw/runs/wait`, { input: humanInput("hello gateway") });
    expect(waited.status).toBe(200);
    expect(await client.chat("hello client", { threadId: "th-cl" })).toBe("Client answer.");
    // titles set through the gateway are listed by both
    expect((await postJson(`${url}/api/threads/th-gw/state`, { values: { title: "Gateway thread" } })).status).toBe(200);

    for (const id of ["th-gw", "th-cl"]) {
      const viaHttp = await getJson<ThreadResponse>(`/api/threads/${id}`);
      expect(viaHttp).toEqual(await client.getThread(id));
      expect((viaHttp.values.messages as Array<{ type: string }>).map((m) => m.type)).toEqual(["human", "ai"]);
    }
    const searched = (await (await postJson(`${url}/api/threads/search`, { limit: 10 })).json()) as ThreadResponse[];
    const listed = await client.listThreads(10);
    expect(searched).toEqual(listed);
    expect(listed.map((t) => [t.thread_id, t.status, t.values])).toEqual([
      ["th-gw", "idle", { title: "Gateway thread" }],
      ["th-cl", "idle", {}],
    ]);
    expect(listed[0].metadata).toEqual({ origin: "gateway" });
    // metadata patched through the gateway (pinning) reorders both listings alike
    await fetch(`${url}/api/threads/th-cl`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { deerflow_pinned: true } }) });
    expect((await client.listThreads()).map((t) => t.thread_id)).toEqual(["th-cl", "th-gw"]);
    expect(await (await postJson(`${url}/api/threads/search`, {})).json()).toEqual(await client.listThreads());
    // the client's run is a gateway run record with a transcript
    const page = await getJson<{ data: Array<{ run_id: string; event_type: string }> }>("/api/threads/th-cl/messages/page");
    expect(page.data.map((d) => d.event_type)).toEqual(["llm.human.input", "llm.ai.response"]);
    const runs = await getJson<Array<{ run_id: string; status: string }>>("/api/threads/th-cl/runs");
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe("success");
    expect(new Set(page.data.map((d) => d.run_id))).toEqual(new Set([runs[0].run_id]));
    // unknown threads: 404 on both
    expect((await fetch(`${url}/api/threads/th-none`)).status).toBe(404);
    await expect(client.getThread("th-none")).rejects.toMatchObject({ status: 404 });
  });
});
