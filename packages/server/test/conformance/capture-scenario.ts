/**
 * DeerFlow's captured run (`shared/reference/deerflow-captures`) replayed on
 * our server: the same scripted provider answers (write_file → present_files
 * → text), the same request, the same reads afterwards.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { postJson } from "../helpers/test-gateway";

/** The same reads the capture holds, from our server. */
export interface Recording {
  headers: Record<string, string>;
  sse: string;
  state: unknown;
  hist: unknown;
  search: unknown;
  thread: unknown;
  runs: unknown;
  models: unknown;
  createdThread: unknown;
  /** Ours only: the SSE of a second turn on the same thread (multi-turn invariants). */
  secondSse?: string;
}

const usage = { input_tokens: 10, output_tokens: 5 };

/** Run the captured scenario against a fresh gateway and return what it answered. */
export async function recordOurs(): Promise<Recording> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "df-capture-"));
  const llm = await startScriptedLLMServer({
    script: [
      {
        toolCalls: [{ name: "write_file", args: { description: "write report", path: "/mnt/user-data/outputs/r.md", content: "# Report\n\nhello from the scripted model\n" } }],
        usage,
      },
      { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/r.md"] } }], usage },
      { text: "Done: the report is in r.md.", usage },
      { text: "Second answer.", usage },
    ],
  });
  const { config } = appConfigFromText(
    [
      "models:",
      "  - name: scripted",
      "    display_name: Scripted",
      "    use: openai-compatible",
      "    model: scripted",
      `    base_url: ${llm.url}/v1`,
      "    api_key: k",
      "sandbox:",
      "  use: local",
    ].join("\n"),
  );
  const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
  const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  try {
    const api = `${url}/api`;
    const createdThread = await (await postJson(`${api}/threads`, { metadata: { bench: "w5" } })).json();
    const tid = (createdThread as { thread_id: string }).thread_id;
    const res = await postJson(`${api}/threads/${tid}/runs/stream`, {
      assistant_id: "lead_agent",
      input: { messages: [{ role: "user", content: "MODE:file write the report" }] },
      stream_mode: ["values", "messages-tuple", "updates", "custom"],
      config: { recursion_limit: 100 },
    });
    const sse = await res.text();
    const headers = Object.fromEntries(res.headers.entries());
    const get = async (p: string) => (await fetch(`${api}${p}`)).json();
    const reads = {
      headers,
      sse,
      state: await get(`/threads/${tid}/state`),
      hist: await (await postJson(`${api}/threads/${tid}/history`, { limit: 1 })).json(),
      search: await (await postJson(`${api}/threads/search`, { limit: 10 })).json(),
      thread: await get(`/threads/${tid}`),
      runs: await get(`/threads/${tid}/runs`),
      models: await get(`/models`),
      createdThread,
    };
    const second = await postJson(`${api}/threads/${tid}/runs/stream`, {
      assistant_id: "lead_agent",
      input: { messages: [{ role: "user", content: "and now?" }] },
      stream_mode: ["values", "messages-tuple", "updates", "custom"],
    });
    return { ...reads, secondSse: await second.text() };
  } finally {
    await gateway.close();
    await runtime.close();
    await llm.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
