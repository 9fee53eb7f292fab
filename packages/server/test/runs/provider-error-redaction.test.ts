/**
 * A provider whose error text echoes the request's credentials (a proxy
 * reflecting `Authorization` / `x-api-key` / `api-key`): the key must appear
 * nowhere the gateway streams or stores — SSE events, the run record, the
 * thread state, the run list, the history, the persisted database.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startRuntimeGateway } from "../helpers/runtime-gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const KEY = "sk-test-9f8e7d6c5b4a39281706";
// The secret part of the key, without the recognisable `sk-` prefix, must not leak in any form either.
const KEY_BODY = KEY.slice(3);

function allFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? allFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe("provider error texts are scrubbed of credentials", () => {
  it("keeps an echoed Authorization / api-key out of the SSE stream, run record, state and files", async () => {
    const llm = await startScriptedLLMServer({ script: [{ fault: "bad_request", message: "Malformed request.", echoCredentials: true }], onExhausted: "repeat-last" });
    const gw = await startRuntimeGateway(
      ["models:", "  - name: basic", "    use: openai-compatible", "    model: scripted", `    base_url: ${llm.url}/v1`, `    api_key: ${KEY}`, "    headers:", `      api-key: ${KEY}`, "title:", "  enabled: false", "sandbox:", "  use: local", "memory:", "  enabled: false"],
      "redact-e2e-",
    );
    cleanups.push(async () => {
      await gw.close();
      await llm.close();
    });
    const { api, dataDir, runtime } = gw;
    await postJson(`${api}/threads`, { thread_id: "t1" });
    const stream = await postJson(`${api}/threads/t1/runs/stream`, { input: humanInput("hello"), stream_mode: ["values", "messages-tuple", "custom", "updates"] });
    expect(stream.status).toBe(200);
    const sse = await stream.text();

    // The double really echoed the key: the client saw the provider's error (kept, scrubbed).
    const echoed = llm.requests[0]!.credentials?.authorization;
    expect(echoed).toBe(`Bearer ${KEY}`);
    expect(sse).toContain("Malformed request.");
    expect(sse).toContain("[REDACTED]");

    const runs = await (await fetch(`${api}/threads/t1/runs`)).text();
    const runId = (JSON.parse(runs) as Array<{ run_id: string }>)[0]!.run_id;
    const record = await (await fetch(`${api}/threads/t1/runs/${runId}`)).text();
    const state = await (await fetch(`${api}/threads/t1/state`)).text();
    const history = await (await postJson(`${api}/threads/t1/history`, { limit: 10 })).text();
    expect(state).toContain("Malformed request.");
    for (const [where, text] of Object.entries({ sse, runs, record, state, history })) {
      expect(text, where).not.toContain(KEY_BODY);
    }
    await runtime.close();
    for (const file of allFiles(dataDir)) {
      expect(fs.readFileSync(file).includes(KEY_BODY), file).toBe(false);
    }
  }, 30_000);
});
