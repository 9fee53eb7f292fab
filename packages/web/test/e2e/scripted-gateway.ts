/**
 * Test fixture: the real gateway (packages/server) in-process on port 0, with an agent driven by a
 * ScriptedModel whose replies are routed by keywords of the latest user message. Tools touch the real
 * per-thread files under the gateway's baseDir.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { askClarificationTool } from "../../../harness/src/builtins/ask-clarification";
import { createWriteTodosTool } from "../../../harness/src/builtins/write-todos";
import { MemoryCheckpointStore } from "../../../harness/src/checkpoints/index";
import { contentText, toolMessage } from "../../../harness/src/messages/index";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../../../harness/src/models/index";
import { createClarificationMiddleware } from "../../../harness/src/middlewares/clarification";
import { createLLMErrorHandlingMiddleware } from "../../../harness/src/middlewares/llm-error-handling";
import { createAgent } from "../../../harness/src/runtime/index";
import type { AgentMiddleware } from "../../../harness/src/runtime/index";
import { Command, threadStateSchema } from "../../../harness/src/state/index";
import { ScriptedModel, type ScriptStep } from "../../../harness/src/testing/index";
import { tool } from "../../../harness/src/tools/index";
import { startServer, type Gateway } from "../../../server/src/index";

export const SLOW_WORDS = 120;
export const SLOW_PACE_MS = 60;

/** The long answer of the "slow" scenario (word i is `w{i}`). */
export function slowText(): string {
  return Array.from({ length: SLOW_WORDS }, (_, i) => `w${i}`).join(" ") + " END.";
}

export const REPORT_MD = "# Quarterly report\n\nRevenue grew **12%**.\n\n| Quarter | Revenue |\n|---|---|\n| Q1 | 10 |\n| Q2 | 12 |\n\n```python\nprint('hello')\n```\n";

type Msg = ModelRequest["messages"][number];

/** A 1×1 red PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
export const CSV_TEXT = "city,visitors\nParis,\"1,200\"\nRome,900\n";
export const HTML_TEXT = "<html><body><h1 id=\"h\">Static page</h1><script>document.getElementById('h').textContent='SCRIPT RAN'</script></body></html>";

let flakyCalls = 0;

function lastHuman(messages: Msg[]): { msg: Msg; index: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].type === "human") return { msg: messages[i], index: i };
  return undefined;
}

/** Routes the conversation to a scripted reply. */
function route(request: ModelRequest): ScriptStep {
  const h = lastHuman(request.messages);
  if (!h) return "Hi.";
  const text = contentText(h.msg.content).toLowerCase();
  const kwargs = (h.msg as { additional_kwargs?: Record<string, unknown> }).additional_kwargs ?? {};
  const after = request.messages.slice(h.index + 1);
  const step = after.filter((m) => m.type === "ai").length;
  const lastTool = [...after].reverse().find((m) => m.type === "tool");

  if (kwargs.human_input_response) {
    const v = (kwargs.human_input_response as { value?: string }).value;
    return `Great choice — planning your trip to ${v}.`;
  }
  if (text.includes("report")) {
    if (step === 0)
      return {
        reasoning: "The user wants a report file. I will write it and present it.",
        text: "I'll write the report.",
        toolCalls: [{ name: "write_file", id: "call_write", args: { description: "Write the report", path: "/mnt/user-data/outputs/report.md", content: REPORT_MD } }],
      };
    if (step === 1) return { toolCalls: [{ name: "present_files", id: "call_present", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] };
    return "The report is ready: **report.md**.";
  }
  if (text.includes("gallery")) {
    if (step === 0)
      return {
        toolCalls: [
          { name: "write_file", id: "call_csv", args: { description: "CSV", path: "/mnt/user-data/outputs/data.csv", content: CSV_TEXT } },
          { name: "write_file", id: "call_html", args: { description: "HTML", path: "/mnt/user-data/outputs/page.html", content: HTML_TEXT } },
          { name: "write_file", id: "call_png", args: { description: "Image", path: "/mnt/user-data/outputs/dot.png", content: PNG_BASE64, base64: true } },
        ],
      };
    if (step === 1) return { toolCalls: [{ name: "present_files", id: "call_present_g", args: { filepaths: ["/mnt/user-data/outputs/data.csv", "/mnt/user-data/outputs/page.html", "/mnt/user-data/outputs/dot.png"] } }] };
    return "Three files are ready.";
  }
  if (text.includes("flaky")) {
    flakyCalls++;
    if (flakyCalls <= 2) return { error: { kind: "server", status: 503, message: "upstream overloaded" } };
    return "Recovered after the retry.";
  }
  if (text.includes("attached")) {
    const files = (kwargs.files as Array<{ path: string }> | undefined) ?? [];
    if (step === 0) return { toolCalls: [{ name: "read_file", id: "call_read", args: { description: "Read the upload", path: files[0]?.path ?? "/mnt/user-data/uploads/missing.txt" } }] };
    return `The file says: ${lastTool ? contentText(lastTool.content).trim() : "(nothing)"}`;
  }
  if (text.includes("trip")) {
    if (step === 0) return { toolCalls: [{ name: "ask_clarification", id: "call_ask", args: { question: "Which city do you want to visit?", clarification_type: "approach_choice", options: ["Paris", "Rome"] } }] };
    return "Ok.";
  }
  if (text.includes("plan")) {
    const todos = (done: number) => ["Research", "Draft", "Review"].map((c, i) => ({ content: c, status: i < done ? "completed" : i === done ? "in_progress" : "pending" }));
    if (step < 3) return { delayMs: 900, toolCalls: [{ name: "write_todos", id: `call_todo_${step}`, args: { todos: todos(step) } }] };
    return "All steps are done.";
  }
  if (text.includes("slow")) return { text: slowText() };
  if (text.includes("xss")) return 'Look: <img src="x" onerror="window.__xss=1"> and <script>window.__xss=2</script> [link](javascript:window.__xss=3) done.';
  return "Hello! Here is some **Markdown**:\n\n| Name | Value |\n|---|---|\n| alpha | 1 |\n\n```typescript\nconst x: number = 42;\n```\n\nAnd math: $E = mc^2$.";
}

/** Delays each text delta of the "slow" scenario so a reload can happen mid-stream. */
class PacedModel implements ChatModel {
  readonly provider = "scripted";
  readonly modelName = "scripted-paced";
  constructor(private readonly inner: ChatModel) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const h = lastHuman(request.messages);
    const slow = h ? contentText(h.msg.content).toLowerCase().includes("slow") : false;
    for await (const part of this.inner.stream(request)) {
      if (part.type === "text-delta") await new Promise((r) => setTimeout(r, slow ? SLOW_PACE_MS : 15));
      yield part;
    }
  }
}

function resolveVirtual(baseDir: string, threadId: string, virtualPath: string): string {
  const root = path.join(baseDir, "users", "default", "threads", threadId, "user-data");
  const rel = virtualPath.replace(/^\/mnt\/user-data\/?/, "");
  const full = path.resolve(root, rel);
  if (!full.startsWith(root + path.sep)) throw new Error(`path outside /mnt/user-data: ${virtualPath}`);
  return full;
}

function fileTools(baseDir: string) {
  const writeFile = tool({
    name: "write_file",
    description: "Write a file",
    schema: z.object({ description: z.string(), path: z.string(), content: z.string(), base64: z.boolean().optional() }),
    execute: (args, rt) => {
      const full = resolveVirtual(baseDir, rt.context.thread_id, args.path);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, args.base64 ? Buffer.from(args.content, "base64") : args.content);
      return "OK";
    },
  });
  const readFile = tool({
    name: "read_file",
    description: "Read a file",
    schema: z.object({ description: z.string(), path: z.string() }),
    execute: (args, rt) => {
      const full = resolveVirtual(baseDir, rt.context.thread_id, args.path);
      if (!fs.existsSync(full)) return `Error: File not found: ${args.path}`;
      return fs.readFileSync(full, "utf8");
    },
  });
  const presentFiles = tool({
    name: "present_files",
    description: "Present output files",
    schema: z.object({ filepaths: z.array(z.string()) }),
    execute: (args, rt) =>
      new Command({
        update: {
          artifacts: args.filepaths,
          messages: [toolMessage("Successfully presented files", { tool_call_id: rt.toolCallId, name: "present_files" })],
        },
      }),
  });
  return [writeFile, readFile, presentFiles];
}

const titleMiddleware: AgentMiddleware = {
  name: "TitleMiddleware",
  afterModel(state) {
    const s = state as unknown as { title?: string | null; messages: Msg[] };
    if (s.title) return undefined;
    const h = s.messages.find((m) => m.type === "human");
    if (!h) return undefined;
    const words = contentText(h.content).split(/\s+/).slice(0, 4).join(" ");
    return { title: `Chat: ${words}` };
  },
};

/** A started gateway plus its temp dir. */
export interface ScriptedGateway {
  gateway: Gateway;
  url: string;
  baseDir: string;
  close(): Promise<void>;
}

/** Starts the real gateway on 127.0.0.1:0 serving `webDist`, with the scripted agent. */
export async function startScriptedGateway(webDist: string): Promise<ScriptedGateway> {
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-e2e-"));
  const checkpointer = new MemoryCheckpointStore();
  const tools = [...fileTools(baseDir), askClarificationTool, createWriteTodosTool()];
  const { gateway, url } = await startServer({
    agentFactory: () =>
      createAgent({
        model: new PacedModel(new ScriptedModel([(req) => route(req)], { onExhausted: "repeat-last" })),
        tools,
        middleware: [
          titleMiddleware,
          createLLMErrorHandlingMiddleware({
            llm_call: { retry_max_attempts: 2, retry_base_delay_ms: 300, retry_cap_delay_ms: 300 },
            circuit_breaker: { failure_threshold: 100 },
            sleep: (ms, signal) => new Promise((r) => { const t = setTimeout(r, Math.min(ms, 1500)); signal?.addEventListener("abort", () => clearTimeout(t)); }),
          }),
          createClarificationMiddleware(),
        ],
        stateSchema: threadStateSchema,
        checkpointer,
        name: "lead_agent",
      }),
    checkpointer,
    dataDir: baseDir,
    baseDir,
    webDistDir: webDist,
    models: [
      { name: "scripted", model: "scripted", display_name: "Scripted model", supports_thinking: true, supports_reasoning_effort: true },
      { name: "scripted-2", model: "scripted", display_name: "Scripted model 2" },
    ],
    port: 0,
    quiet: true,
    log: () => {},
  });
  return {
    gateway,
    url,
    baseDir,
    async close() {
      await gateway.close();
      fs.rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
