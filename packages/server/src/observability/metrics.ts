/**
 * The gateway's Prometheus metrics (`/metrics`, with `metrics.enabled: true`).
 * prom-client is imported only when metrics are on. Run, model-token and
 * tool-call figures are taken from each finished run's stored record and
 * result (one update per run, nothing per streamed event); request figures
 * from one middleware; MCP server states and the memory queue are read when
 * scraped; the process figures (CPU, memory, event-loop lag, GC) are
 * prom-client's defaults.
 */
import type { DeerFlowRuntime, Message, PersistenceStores, RunHook } from "@deerflow-ts/harness";
import type { MiddlewareHandler } from "hono";
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import { routePattern } from "./access-log";

/** What {@link openMetrics} builds. */
export interface GatewayMetrics {
  readonly registry: Registry;
  /** The run hook feeding the run, token and tool families. */
  readonly runHook: RunHook;
  /** Counts every request (method, route pattern, status) and its duration. */
  readonly middleware: MiddlewareHandler;
  /** The Prometheus text of every family. */
  text(): Promise<string>;
  /** The text's content type. */
  readonly contentType: string;
}

const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The caller family of a usage caller (`lead_agent`, `subagent:<type>`, `middleware:<name>`): `lead`, `subagent`, `middleware`. */
function callerKind(caller: string): string {
  if (caller === "lead_agent") return "lead";
  const i = caller.indexOf(":");
  return i > 0 ? caller.slice(0, i) : caller;
}

/** The tool messages a run added (ids not in its start state), for the tool-call family. */
function toolMessagesOfRun(state: { messages?: unknown } | undefined, start: { messages?: unknown } | undefined): Message[] {
  const before = new Set(((start?.messages ?? []) as Message[]).map((m) => m.id).filter(Boolean));
  return ((state?.messages ?? []) as Message[]).filter((m) => m.type === "tool" && !(m.id && before.has(m.id)));
}

/** Build the registry and its families (imports prom-client). */
export async function openMetrics(options: { runtime: DeerFlowRuntime; stores: PersistenceStores }): Promise<GatewayMetrics> {
  const prom = await import("prom-client");
  const { runtime, stores } = options;
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry, prefix: "deerflow_" });
  const runs: Counter<"status"> = new prom.Counter({ name: "deerflow_runs_total", help: "Finished runs by status (success, error, timeout, interrupted)", labelNames: ["status"], registers: [registry] });
  const runDuration: Histogram<"status"> = new prom.Histogram({ name: "deerflow_run_duration_seconds", help: "Run duration from creation to end", labelNames: ["status"], buckets: RUN_BUCKETS, registers: [registry] });
  let active = 0;
  new prom.Gauge({ name: "deerflow_active_runs", help: "Runs executing in this process", registers: [registry], collect() { this.set(active); } });
  const tokens: Counter<"model" | "caller" | "kind"> = new prom.Counter({ name: "deerflow_model_tokens_total", help: "Model tokens by model, caller (lead, subagent, middleware) and kind (input, output)", labelNames: ["model", "caller", "kind"], registers: [registry] });
  const modelCalls: Counter<"model" | "caller"> = new prom.Counter({ name: "deerflow_model_calls_total", help: "Model calls by model and caller", labelNames: ["model", "caller"], registers: [registry] });
  const tools: Counter<"tool" | "outcome"> = new prom.Counter({ name: "deerflow_tool_calls_total", help: "Tool calls by tool and outcome (success, error)", labelNames: ["tool", "outcome"], registers: [registry] });
  const requests: Counter<"method" | "route" | "status"> = new prom.Counter({ name: "deerflow_http_requests_total", help: "HTTP requests by method, route pattern and status", labelNames: ["method", "route", "status"], registers: [registry] });
  const requestDuration: Histogram<"method" | "route"> = new prom.Histogram({ name: "deerflow_http_request_duration_seconds", help: "HTTP request duration by method and route pattern", labelNames: ["method", "route"], buckets: HTTP_BUCKETS, registers: [registry] });
  const mcp: Gauge<"server" | "state"> = new prom.Gauge({
    name: "deerflow_mcp_server_status",
    help: "MCP servers by state (1 for the server's current state)",
    labelNames: ["server", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of runtime.extensions.mcp?.status() ?? []) this.set({ server: s.name, state: s.state }, 1);
    },
  });
  void mcp;
  new prom.Gauge({
    name: "deerflow_memory_queue_depth",
    help: "Conversations waiting for the memory updater",
    registers: [registry],
    collect() {
      this.set(runtime.extensions.memory?.updaterStatus.pending ?? 0);
    },
  });

  const runHook: RunHook = {
    name: "metrics",
    runStarted() {
      active++;
    },
    async runFinished(run) {
      active = Math.max(0, active - 1);
      const r = await stores.runs.get(run.runId);
      const status = r?.status ?? run.status;
      runs.inc({ status });
      if (r) runDuration.observe({ status }, Math.max(0, Date.parse(r.updatedAt) - Date.parse(r.createdAt)) / 1000);
      const model = r?.modelName ?? "unknown";
      for (const [caller, u] of Object.entries(run.result?.outcome.usageByCaller ?? {})) {
        const kind = callerKind(caller);
        tokens.inc({ model, caller: kind, kind: "input" }, u.input_tokens);
        tokens.inc({ model, caller: kind, kind: "output" }, u.output_tokens);
        modelCalls.inc({ model, caller: kind }, u.calls);
      }
      for (const m of toolMessagesOfRun(run.state, run.result?.startState)) {
        if (m.type !== "tool") continue;
        tools.inc({ tool: m.name ?? "unknown", outcome: m.status === "error" ? "error" : "success" });
      }
    },
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    const start = performance.now();
    await next();
    const route = routePattern(c);
    requests.inc({ method: c.req.method, route, status: String(c.res.status) });
    requestDuration.observe({ method: c.req.method, route }, (performance.now() - start) / 1000);
  };

  return { registry, runHook, middleware, text: () => registry.metrics(), contentType: registry.contentType };
}
