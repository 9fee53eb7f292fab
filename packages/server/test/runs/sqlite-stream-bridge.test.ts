/**
 * A gateway on `stream_bridge.type: sqlite` streams a run's events from the
 * bridge file under the data dir, a join replays them after `Last-Event-ID`,
 * and a gateway started again on the same data dir still replays them: the
 * events outlived the process that wrote them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startRuntimeGateway } from "../helpers/runtime-gateway";
import { humanInput, parseSse, postJson } from "../helpers/test-gateway";
import type { SseFrame } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A runtime and its gateway on `dataDir` with the SQLite stream bridge. */
const start = (dataDir: string, llmUrl: string) =>
  startRuntimeGateway(
    ["models:", "  - name: basic", "    use: openai-compatible", "    model: scripted", `    base_url: ${llmUrl}/v1`, "    api_key: k", "title:", "  enabled: false", "sandbox:", "  use: local", "memory:", "  enabled: false", "stream_bridge:", "  type: sqlite"],
    "sqlite-bridge-gw-",
    { dataDir },
  );

/** The frames that carry an event id (the bridge's entries). */
const withIds = (frames: SseFrame[]) => frames.filter((f) => f.id !== undefined);

async function join(api: string, runId: string, lastEventId: string | null): Promise<SseFrame[]> {
  const res = await fetch(`${api}/threads/t1/runs/${runId}/stream`, { headers: lastEventId ? { "last-event-id": lastEventId } : {} });
  expect(res.status).toBe(200);
  return parseSse(await res.text());
}

describe("stream_bridge.type: sqlite", () => {
  it("streams a run from the bridge file, replays it after Last-Event-ID, and again after a restart on the same data dir", async () => {
    const llm = await startScriptedLLMServer({ script: [{ text: "Stored in the bridge." }], onExhausted: "repeat-last" });
    cleanups.push(() => llm.close());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sqlite-bridge-gw-"));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));

    const first = await start(dataDir, llm.url);
    await postJson(`${first.api}/threads`, { thread_id: "t1" });
    const res = await postJson(`${first.api}/threads/t1/runs/stream`, { input: humanInput("hello"), stream_mode: ["values", "messages-tuple"] });
    expect(res.status).toBe(200);
    const streamed = withIds(parseSse(await res.text()));
    expect(streamed.length).toBeGreaterThan(2);
    expect(streamed.map((f) => f.data).join("\n")).toContain("Stored in the bridge.");
    const runId = (JSON.parse(streamed[0].data!) as { run_id: string }).run_id;
    // the ids are the bridge's `{ms}-{seq}` entry ids, and its file is where the config says
    expect(streamed.every((f) => /^\d+-\d+$/.test(f.id!))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, "data", "stream-bridge.db"))).toBe(true);

    // a join after the first event replays the rest, byte for byte
    const replayed = withIds(await join(first.api, runId, streamed[0].id!));
    expect(replayed).toEqual(streamed.slice(1));
    await first.close();

    // a new process on the same data dir: the run's events are still there to replay
    const second = await start(dataDir, llm.url);
    cleanups.push(() => second.close());
    const afterRestart = withIds(await join(second.api, runId, streamed[1].id!));
    expect(afterRestart).toEqual(streamed.slice(2));
    expect(afterRestart.map((f) => f.data).join("\n")).toContain("Stored in the bridge.");
    const whole = withIds(await join(second.api, runId, null));
    expect(whole).toEqual(streamed);
  });
});
