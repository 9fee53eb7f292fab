/**
 * Test fixture: the real gateway (packages/server) in-process on port 0, running DeerFlow's real lead
 * agent (a `DeerFlowRuntime` building the lead agent: configured sandbox tools, builtins, the full middleware chain incl.
 * InputSanitization, DynamicContext, Uploads, LLMErrorHandling, Todo, Title and Clarification). Only the
 * chat model is a test double: a ScriptedModel whose replies are routed by keywords of the request the
 * lead chain actually sends. Tools touch the real per-thread files under the gateway's data dir; `bash`
 * runs in bubblewrap when it works here (else the local provider with `allow_host_bash`).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  appConfigFromText,
  contentText,
  createChatModel,
  DeerFlowRuntime,
  parseSandboxConfig,
  probeBwrap,
  sandboxRunAs,
  SqliteCheckpointStore,
} from "@deerflow-ts/harness";
import type { ChatModel, ModelRequest, ModelStreamPart } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { ScriptStep } from "@deerflow-ts/harness/testing";
import { startServer } from "@deerflow-ts/server";
import type { Gateway, GatewayOptions } from "@deerflow-ts/server";

export const SLOW_WORDS = 120;
export const SLOW_PACE_MS = 60;

/** The long answer of the "slow" scenario (word i is `w{i}`). */
export function slowText(): string {
  return Array.from({ length: SLOW_WORDS }, (_, i) => `w${i}`).join(" ") + " END.";
}

export const REPORT_MD = "# Quarterly report\n\nRevenue grew **12%**.\n\n| Quarter | Revenue |\n|---|---|\n| Q1 | 10 |\n| Q2 | 12 |\n\n```python\nprint('hello')\n```\n";

/** A 1×1 red PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
export const PNG_BYTES = Buffer.from(PNG_BASE64, "base64").length;
export const CSV_TEXT = "city,visitors\nParis,\"1,200\"\nRome,900\n";
export const HTML_TEXT = "<html><body><h1 id=\"h\">Static page</h1><script>document.getElementById('h').textContent='SCRIPT RAN'</script></body></html>";
/** The shell command the model runs (through the real `bash` tool) to produce the PNG. */
export const PNG_COMMAND = `printf '%s' '${PNG_BASE64}' | base64 -d > /mnt/user-data/outputs/dot.png && wc -c < /mnt/user-data/outputs/dot.png`;

/** Start of DeerFlow's title prompt (TitleMiddleware with `title.model_name`). */
const TITLE_PROMPT_START = "generate a concise title";

/** Bubblewrap works on this machine (else `bash` runs through the local provider with allow_host_bash). */
export const BWRAP_OK = probeBwrap({ runAs: sandboxRunAs(parseSandboxConfig({})) }).ok;
if (!BWRAP_OK) console.warn("[web e2e] bubblewrap unavailable (apt-get install -y bubblewrap): bash runs on the host through the local provider");

/** The app config the lead agent runs with (only the model endpoint is unreachable: its model is replaced). */
export const E2E_CONFIG = `
config_version: 34
models:
  - name: scripted
    display_name: Scripted model
    use: openai-compatible
    model: scripted
    base_url: http://127.0.0.1:9/v1
    api_key: test
    supports_thinking: true
    supports_reasoning_effort: true
  - name: scripted-2
    display_name: Scripted model 2
    use: openai-compatible
    model: scripted
    base_url: http://127.0.0.1:9/v1
    api_key: test
tools:
  - { name: ls, group: file:read, use: deerflow.sandbox.tools:ls_tool }
  - { name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool }
  - { name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool }
  - { name: str_replace, group: file:write, use: deerflow.sandbox.tools:str_replace_tool }
  - { name: bash, group: bash, use: deerflow.sandbox.tools:bash_tool }
sandbox:
  use: ${BWRAP_OK ? "bwrap" : "local"}
  allow_host_bash: true
title:
  enabled: true
  max_words: 6
  max_chars: 60
  model_name: scripted
llm_call:
  retry_max_attempts: 2
  retry_base_delay_ms: 300
  retry_cap_delay_ms: 300
circuit_breaker:
  failure_threshold: 100
# Off here: the memory updater's model call (30 s after a run) would go through route() and its keyword counters.
memory:
  enabled: false
`;

type Msg = ModelRequest["messages"][number];

let flakyCalls = 0;

function lastHuman(messages: readonly Msg[]): { msg: Msg; index: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].type === "human") return { msg: messages[i], index: i };
  return undefined;
}

/** The user's words inside InputSanitization's `--- BEGIN USER INPUT ---` frame (the whole text when unframed). */
export function userInput(text: string): string {
  const m = /--- BEGIN USER INPUT ---\n?([\s\S]*?)\n?--- END USER INPUT ---/.exec(text);
  return m ? m[1] : text;
}

/** The title the scripted title model answers (quoted, as models often do; TitleMiddleware strips quotes). */
function titleReply(prompt: string): string {
  const user = /\nUser: ([^\n]*)/.exec(prompt)?.[1] ?? "";
  return `"Chat: ${user.split(/\s+/).slice(0, 4).join(" ")}"`;
}

/** Routes the request the lead chain sends to a scripted reply. */
export function route(request: ModelRequest): ScriptStep {
  const h = lastHuman(request.messages);
  if (!h) return "Hi.";
  const raw = contentText(h.msg.content);
  // The title model call: TitleMiddleware sends one human message with DeerFlow's title prompt.
  if (request.messages.length === 1 && raw.toLowerCase().startsWith(TITLE_PROMPT_START)) return titleReply(raw);
  const words = userInput(raw).toLowerCase();
  const kwargs = (h.msg as { additional_kwargs?: Record<string, unknown> }).additional_kwargs ?? {};
  const after = request.messages.slice(h.index + 1);
  const step = after.filter((m) => m.type === "ai").length;
  const lastTool = [...after].reverse().find((m) => m.type === "tool");

  // Sub-agents: a child's task message starts with "subtask" (it is offered no `task` tool); the lead delegates two.
  // Sub-agents that are still working when the user presses Stop (their model call would take a minute).
  if (words.startsWith("subtask hold") && !request.tools.some((t) => t.name === "task")) return { delayMs: 60_000, text: "never" };
  if (words.includes("delegate and hold") && request.tools.some((t) => t.name === "task")) {
    if (step === 0) return { toolCalls: ["alpha", "beta"].map((w) => ({ name: "task", id: `call_hold_${w}`, args: { description: `Hold ${w}`, prompt: `subtask hold ${w}`, subagent_type: "researcher" } })) };
    return "Both held sub-agents reported back.";
  }
  if (words.startsWith("subtask") && !request.tools.some((t) => t.name === "task")) {
    if (step === 0) return { delayMs: 300, text: `Looking into ${words.slice(8)}.`, toolCalls: [{ name: "ls", id: `call_ls_${words.slice(8)}`, args: { description: "Look around", path: "/mnt/user-data/workspace" } }] };
    return { delayMs: 300, text: `Found 3 facts about ${words.slice(8)}.` };
  }
  if (words.includes("delegate") && request.tools.some((t) => t.name === "task")) {
    if (step === 0)
      return {
        toolCalls: ["alpha", "beta"].map((w) => ({ name: "task", id: `call_task_${w}`, args: { description: `Research ${w}`, prompt: `subtask ${w}`, subagent_type: "researcher" } })),
      };
    return "Both sub-agents reported back.";
  }
  // A tool call that is still running when the user presses Stop (the sandbox kills the command on cancel).
  if (words.includes("longtool")) {
    if (step === 0) return { toolCalls: [{ name: "bash", id: "call_long", args: { description: "Wait a long time", command: "sleep 60" } }] };
    return "Finished waiting.";
  }
  if (kwargs.human_input_response) {
    const v = (kwargs.human_input_response as { value?: string }).value;
    return `Great choice — planning your trip to ${v}.`;
  }
  if (words.includes("report")) {
    if (step === 0)
      return {
        reasoning: "The user wants a report file. I will write it and present it.",
        text: "I'll write the report.",
        toolCalls: [{ name: "write_file", id: "call_write", args: { description: "Write the report", path: "/mnt/user-data/outputs/report.md", content: REPORT_MD } }],
      };
    if (step === 1) return { toolCalls: [{ name: "present_files", id: "call_present", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] };
    return "The report is ready: **report.md**.";
  }
  if (words.includes("gallery")) {
    if (step === 0)
      return {
        toolCalls: [
          { name: "write_file", id: "call_csv", args: { description: "CSV", path: "/mnt/user-data/outputs/data.csv", content: CSV_TEXT } },
          { name: "write_file", id: "call_html", args: { description: "HTML", path: "/mnt/user-data/outputs/page.html", content: HTML_TEXT } },
          { name: "bash", id: "call_png", args: { description: "Decode the image", command: PNG_COMMAND } },
        ],
      };
    if (step === 1) return { toolCalls: [{ name: "present_files", id: "call_present_g", args: { filepaths: ["/mnt/user-data/outputs/data.csv", "/mnt/user-data/outputs/page.html", "/mnt/user-data/outputs/dot.png"] } }] };
    return "Three files are ready.";
  }
  if (words.includes("flaky")) {
    flakyCalls++;
    if (flakyCalls <= 2) return { error: { kind: "server", status: 503, message: "upstream overloaded" } };
    return "Recovered after the retry.";
  }
  if (words.includes("attached")) {
    // The Uploads middleware announces the file in a <current_uploads> block with its virtual path.
    const upload = /Path: (\/mnt\/user-data\/uploads\/\S+)/.exec(raw)?.[1];
    if (step === 0) return { toolCalls: [{ name: "read_file", id: "call_read", args: { description: "Read the upload", path: upload ?? "/mnt/user-data/uploads/missing.txt" } }] };
    return `The file says: ${lastTool ? contentText(lastTool.content).trim() : "(nothing)"}`;
  }
  if (words.includes("trip")) {
    if (step === 0) return { toolCalls: [{ name: "ask_clarification", id: "call_ask", args: { question: "Which city do you want to visit?", clarification_type: "approach_choice", options: ["Paris", "Rome"] } }] };
    return "Ok.";
  }
  if (words.includes("plan")) {
    const todos = (done: number) => ["Research", "Draft", "Review"].map((c, i) => ({ content: c, status: i < done ? "completed" : i === done ? "in_progress" : "pending" }));
    if (step < 3) return { delayMs: 900, toolCalls: [{ name: "write_todos", id: `call_todo_${step}`, args: { todos: todos(step) } }] };
    return "All steps are done.";
  }
  if (words.includes("slow")) return { text: slowText() };
  if (words.includes("xss")) return 'Look: <img src="x" onerror="window.__xss=1"> and <script>window.__xss=2</script> [link](javascript:window.__xss=3) done.';
  return "Hello! Here is some **Markdown**:\n\n| Name | Value |\n|---|---|\n| alpha | 1 |\n\n```typescript\nconst x: number = 42;\n```\n\nAnd math: $E = mc^2$.";
}

/** Delays each text delta (slowly for the "slow" scenario, so a reload can happen mid-stream). */
class PacedModel implements ChatModel {
  readonly provider = "scripted";
  readonly modelName = "scripted-paced";
  constructor(private readonly inner: ChatModel) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const h = lastHuman(request.messages);
    const slow = h ? userInput(contentText(h.msg.content)).toLowerCase().includes("slow") : false;
    for await (const part of this.inner.stream(request)) {
      if (part.type === "text-delta") await new Promise((r) => setTimeout(r, slow ? SLOW_PACE_MS : 15));
      yield part;
    }
  }
}

/** A started gateway plus its temp dir. */
export interface ScriptedGateway {
  gateway: Gateway;
  url: string;
  baseDir: string;
  /** The runtime behind the gateway (the real lead agent over the scripted model). */
  runtime: DeerFlowRuntime;
  /** Every request the routing model received (agent turns and title calls). */
  requests: ModelRequest[];
  close(): Promise<void>;
}

/** Options of {@link startScriptedGateway}. */
export interface ScriptedGatewayOptions {
  /** An `auth:` section (as in config.yaml) to run with sign-in on; default: auth disabled, the default admin. */
  auth?: GatewayOptions["auth"];
}

/** A 48-character HS256 secret for e2e gateways with sign-in on (never used outside the test). */
export const E2E_JWT_SECRET = "e2e-only-session-secret-0123456789abcdefghijklmn";

/** Sign-in on, with the accounts in the gateway's data dir (`auth.db`). */
export function authEnabledSection(extra: Record<string, unknown> = {}): NonNullable<GatewayOptions["auth"]> {
  return { enabled: true, jwt_secret: E2E_JWT_SECRET, registration_enabled: false, session_days: 7, ...extra } as NonNullable<GatewayOptions["auth"]>;
}

/** Starts the real gateway on 127.0.0.1:0 serving `webDist`, with the real lead agent over the routing model. */
export async function startScriptedGateway(webDist: string, options: ScriptedGatewayOptions = {}): Promise<ScriptedGateway> {
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-e2e-"));
  fs.mkdirSync(path.join(baseDir, "data"), { recursive: true });
  const checkpointer = new SqliteCheckpointStore(path.join(baseDir, "data", "deerflow.db"));
  const { config } = appConfigFromText(E2E_CONFIG);
  const requests: ModelRequest[] = [];
  const model = new PacedModel(
    new ScriptedModel(
      [
        (req) => {
          requests.push(req);
          return route(req);
        },
      ],
      { onExhausted: "repeat-last", recordRequests: false },
    ),
  );
  const runtime = await DeerFlowRuntime.open({
    config,
    dataDir: baseDir,
    checkpointer,
    // The real model resolution (entry, thinking, vision flags); only the network model is replaced.
    modelFactory: (cfg, name, opts) => ({ ...createChatModel(cfg, name, opts), model }),
    log: () => {},
  });
  const { gateway, url } = await startServer({
    runtime,
    webDistDir: webDist,
    port: 0,
    quiet: true,
    log: () => {},
    auth: options.auth,
  });
  return {
    gateway,
    url,
    baseDir,
    runtime,
    requests,
    async close() {
      await gateway.close();
      await runtime.close();
      await checkpointer.close();
      fs.rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
