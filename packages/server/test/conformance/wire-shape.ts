/**
 * Structural comparison of two LangGraph wire recordings (DeerFlow's capture
 * and ours): value types, key sets and id/timestamp formats, with ids,
 * timestamps, paths and texts normalised away. Each difference is a stable
 * code (`<context>: <what>`) so a test can check it against the documented list.
 */

/** One SSE event with its JSON data. */
export interface WireEvent {
  event: string;
  data: unknown;
}

/** Parse a raw SSE body (keeps only events with data). */
export function parseSseEvents(text: string): WireEvent[] {
  const out: WireEvent[] = [];
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length) continue;
    const raw = data.join("\n");
    out.push({ event, data: raw === "" ? null : JSON.parse(raw) });
  }
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The format class of a string: uuid version, LangChain run id, tool call id, ISO timestamp offset, or plain. */
export function stringFormat(s: string): string {
  const suffix = s.endsWith("__user") ? "__user" : "";
  const core = suffix ? s.slice(0, -suffix.length) : s;
  const m = UUID.exec(core);
  if (m) return `uuid${m[1]}${suffix}`;
  if (core.startsWith("lc_run--")) {
    const v = UUID.exec(core.slice(8));
    return v ? `lc_run--uuid${v[1]}` : "lc_run--?";
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s)) return s.endsWith("Z") ? "iso-Z" : "iso-offset";
  return "string";
}

/** Keys whose string values are free text or paths: their format is not compared. */
const FREE_TEXT_KEYS = new Set(["content", "text", "title", "path", "workspace_path", "uploads_path", "outputs_path", "description", "args", "reminder_date", "langgraph_checkpoint_ns"]);

/** `path → set of type/format labels` accumulated over samples. */
export type Shape = Map<string, Set<string>>;

function label(value: unknown, key: string): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "string") return FREE_TEXT_KEYS.has(key) ? "string" : stringFormat(value);
  return typeof value;
}

/**
 * Add a value's shape under `prefix`. Objects recurse into keys; arrays into
 * a single `[]` element shape. Values of maps keyed by data (node names,
 * model names) are recursed under `*` when `mapKeys` names the path.
 */
export function addShape(shape: Shape, value: unknown, prefix = "$", key = "", opaque: Set<string> = new Set()): Shape {
  const add = (p: string, l: string) => {
    let s = shape.get(p);
    if (!s) shape.set(p, (s = new Set()));
    s.add(l);
  };
  add(prefix, label(value, key));
  if (opaque.has(prefix) || value === null || typeof value !== "object") return shape;
  if (Array.isArray(value)) {
    for (const v of value) addShape(shape, v, `${prefix}[]`, key, opaque);
    return shape;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) addShape(shape, v, `${prefix}.${k}`, k, opaque);
  return shape;
}

/** A shape built from several samples. */
export function shapeOf(samples: unknown[], opaque: string[] = []): Shape {
  const shape: Shape = new Map();
  for (const s of samples) addShape(shape, s, "$", "", new Set(opaque));
  return shape;
}

/**
 * Differences of `ours` against `theirs`: `missing <path>`, `extra <path>`,
 * `type <path> <theirs> → <ours>` (labels sorted). Paths under a missing or
 * extra parent are reported once, at the parent.
 */
export function compareShapes(context: string, theirs: Shape, ours: Shape): string[] {
  const out: string[] = [];
  const reported: string[] = [];
  const under = (p: string) => reported.some((r) => p.startsWith(`${r}.`) || p.startsWith(`${r}[]`));
  const fmt = (s: Set<string>) => [...s].sort().join("|");
  for (const p of [...new Set([...theirs.keys(), ...ours.keys()])].sort()) {
    if (under(p)) continue;
    const a = theirs.get(p);
    const b = ours.get(p);
    if (a && !b) {
      out.push(`${context}: missing ${p}`);
      reported.push(p);
    } else if (!a && b) {
      out.push(`${context}: extra ${p}`);
      reported.push(p);
    } else if (a && b && fmt(a) !== fmt(b)) {
      // an empty list on one side and items on the other is data, not shape
      out.push(`${context}: type ${p} ${fmt(a)} → ${fmt(b)}`);
    }
  }
  return out;
}

/** Messages of a stream, split by kind: `human`, `ai-chunk`, `tool`, … (type field) with their metadata. */
export function messageTuples(events: WireEvent[]): Array<{ kind: string; message: Record<string, unknown>; meta: Record<string, unknown> }> {
  return events
    .filter((e) => e.event === "messages" || e.event.startsWith("messages|"))
    .map((e) => {
      const [message, meta] = e.data as [Record<string, unknown>, Record<string, unknown>];
      return { kind: String(message.type), message, meta };
    });
}

/** `updates` node names in order. */
export function updateNodes(events: WireEvent[]): string[] {
  return events.filter((e) => e.event === "updates").flatMap((e) => Object.keys((e.data ?? {}) as object));
}

/** The event sequence with runs of `messages` chunks collapsed, e.g. `metadata values updates:X messages*`. */
export function eventSkeleton(events: WireEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const tag = e.event === "updates" ? `updates:${Object.keys((e.data ?? {}) as object).join(",")}` : e.event;
    if (tag === "messages" && out[out.length - 1] === "messages*") continue;
    out.push(tag === "messages" ? "messages*" : tag);
  }
  return out;
}
