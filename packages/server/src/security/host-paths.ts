import fs from "node:fs";
import path from "node:path";
import { VIRTUAL_USER_DATA_ROOT } from "@deerflow-ts/harness";

/**
 * Host paths never leave the server: a client (or a page, or the agent
 * reading an API answer) that learns where the data dir is on the host can
 * aim the host's own tools at files it controls there. Responses speak the
 * agent's virtual paths (`/mnt/user-data/...`) instead.
 */

/** `thread_data` as clients see it: the virtual directories, the same for every thread. */
export const VIRTUAL_THREAD_DATA: Readonly<Record<string, string>> = Object.freeze({
  workspace_path: `${VIRTUAL_USER_DATA_ROOT}/workspace`,
  uploads_path: `${VIRTUAL_USER_DATA_ROOT}/uploads`,
  outputs_path: `${VIRTUAL_USER_DATA_ROOT}/outputs`,
});

/**
 * Thread state values for a response: `thread_data` (the host directories
 * the harness keeps for its own file handling) shown as virtual paths. The
 * input is not modified; values without `thread_data` are returned as is.
 */
export function publicStateValues<T>(values: T): T {
  if (!values || typeof values !== "object" || Array.isArray(values)) return values;
  const td = (values as Record<string, unknown>).thread_data;
  if (!td || typeof td !== "object") return values;
  return { ...values, thread_data: { ...VIRTUAL_THREAD_DATA } } as T;
}

/**
 * One streamed event's data for a client. `values` (and the values inside
 * `checkpoints`/`debug` payloads) and `updates` (per-node writes) carry the
 * state keys; other modes carry none of them.
 */
export function publicStreamData(mode: string, data: unknown): unknown {
  if (!data || typeof data !== "object") return data;
  if (mode === "values") return publicStateValues(data);
  if (mode === "updates") {
    let out: Record<string, unknown> | undefined;
    for (const [node, update] of Object.entries(data as Record<string, unknown>)) {
      const masked = publicStateValues(update);
      if (masked !== update) (out ??= { ...(data as Record<string, unknown>) })[node] = masked;
    }
    return out ?? data;
  }
  // a task's start carries the state it read (`input`), its end what it wrote (`result`): both hold state keys
  if (mode === "tasks") return publicTaskPayload(data as Record<string, unknown>);
  if (mode === "debug") {
    const d = data as Record<string, unknown>;
    if ((d.type === "task" || d.type === "task_result") && d.payload && typeof d.payload === "object") {
      return { ...d, payload: publicTaskPayload(d.payload as Record<string, unknown>) };
    }
  }
  if (mode === "checkpoints" || mode === "debug") {
    const d = data as Record<string, unknown>;
    if (d.values && typeof d.values === "object") return { ...d, values: publicStateValues(d.values) };
    const payload = d.payload as Record<string, unknown> | undefined;
    if (payload && typeof payload === "object" && payload.values && typeof payload.values === "object") {
      return { ...d, payload: { ...payload, values: publicStateValues(payload.values) } };
    }
  }
  return data;
}

function publicTaskPayload(payload: Record<string, unknown>): Record<string, unknown> {
  let out = payload;
  for (const key of ["input", "result"] as const) {
    const v = payload[key];
    if (!v || typeof v !== "object") continue;
    const masked = publicStateValues(v);
    if (masked !== v) out = { ...out, [key]: masked };
  }
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Rewrites host paths under the gateway's data dirs in client-bound text:
 * a thread's `…/users/{u}/threads/{t}/user-data/x` becomes
 * `/mnt/user-data/x`, any other path under a data dir `<data dir>/…`. Used
 * on error details, whose messages come from code that names the files it
 * touched (file system errors, archive readers).
 */
export class HostPathMasker {
  private readonly thread: RegExp | undefined;
  private readonly roots: RegExp | undefined;

  constructor(dirs: readonly string[]) {
    const roots = new Set<string>();
    for (const d of dirs) {
      if (!d) continue;
      const abs = path.resolve(d);
      roots.add(abs);
      try {
        roots.add(fs.realpathSync(abs));
      } catch {
        // not created yet: its spelled path is all a message can contain
      }
    }
    const list = [...roots].filter((r) => r !== path.sep).sort((a, b) => b.length - a.length).map(escapeRe);
    if (!list.length) return;
    const alt = list.join("|");
    // a data dir ends where a name character would continue it (`/srv/deer` is not `/srv/deer-old`), so a
    // path that ends a sentence, a list or a bracket is rewritten too
    const seg = `[^/\\\\\\s'"\`]+`;
    this.thread = new RegExp(`(?:${alt})[/\\\\]users[/\\\\]${seg}[/\\\\]threads[/\\\\]${seg}[/\\\\]user-data(?![\\p{L}\\p{N}_-])`, "gu");
    this.roots = new RegExp(`(?:${alt})(?![\\p{L}\\p{N}_-])`, "gu");
  }

  /** `text` with host paths replaced. */
  maskText(text: string): string {
    if (!this.thread || !this.roots) return text;
    return text.replace(this.thread, VIRTUAL_USER_DATA_ROOT).replace(this.roots, "<data dir>");
  }

  /** A JSON-like value with every string masked (error `detail` objects: findings, reasons). */
  mask<T>(value: T, depth = 0): T {
    if (typeof value === "string") return this.maskText(value) as T;
    if (depth > 32 || !value || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map((v) => this.mask(v, depth + 1)) as T;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = this.mask(v, depth + 1);
    return out as T;
  }
}
