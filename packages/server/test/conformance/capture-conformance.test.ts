/**
 * Wire conformance with DeerFlow itself: our server answers DeerFlow's
 * captured scenario (`shared/reference/deerflow-captures`), and the two
 * recordings are compared by structure — event sequence, `updates` node
 * names, key sets, value types and id/timestamp formats, with ids, texts,
 * paths and timestamps normalised away. Every difference found must be listed
 * (with its reason) in docs/server.md, section "Wire conformance with DeerFlow".
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { recordOurs } from "./capture-scenario";
import type { Recording } from "./capture-scenario";
import { compareShapes, eventSkeleton, messageTuples, parseSseEvents, shapeOf, stringFormat, updateNodes } from "./wire-shape";
import type { WireEvent } from "./wire-shape";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../../..");
const CAPTURES = [path.join(repo, "shared/reference/deerflow-captures"), path.join(repo, "../shared/reference/deerflow-captures")].find((p) =>
  fs.existsSync(path.join(p, "run-write-present-deerflow.json")),
);
if (!CAPTURES) console.warn("[conformance] SKIPPING: DeerFlow captures not found (../shared/reference/deerflow-captures)");

/** The differences docs/server.md documents: every backticked `context: …` entry of its conformance section. */
function documentedDifferences(): Set<string> {
  const doc = fs.readFileSync(path.join(repo, "docs/server.md"), "utf8");
  const start = doc.indexOf("## Wire conformance with DeerFlow");
  const section = doc.slice(start, doc.indexOf("\n## ", start + 10) === -1 ? undefined : doc.indexOf("\n## ", start + 10));
  // a `|` inside a table cell is written `\|`
  return new Set([...section.matchAll(/`([a-z][\w.[\]-]*: [^`]+)`/g)].map((m) => m[1].replace(/\\\|/g, "|")));
}

/** Messages inside a state-like object, split by type, plus the object with its message list left opaque. */
function splitMessages(ctx: string, theirs: unknown, ours: unknown, listPath: (v: unknown) => unknown[] | undefined, opaque: string): string[] {
  const diffs = compareShapes(ctx, shapeOf([theirs], [opaque]), shapeOf([ours], [opaque]));
  const byType = (v: unknown) => {
    const out = new Map<string, unknown[]>();
    for (const m of listPath(v) ?? []) {
      const t = String((m as { type?: unknown }).type);
      out.set(t, [...(out.get(t) ?? []), m]);
    }
    return out;
  };
  const a = byType(theirs);
  const b = byType(ours);
  for (const t of new Set([...a.keys(), ...b.keys()])) {
    diffs.push(...compareShapes(`${ctx}.messages[${t}]`, shapeOf(a.get(t) ?? [], MESSAGE_OPAQUE), shapeOf(b.get(t) ?? [], MESSAGE_OPAQUE)));
  }
  return diffs;
}

/** Inside messages, tool arguments and response metadata are data, not shape. */
const MESSAGE_OPAQUE = ["$.tool_calls[].args", "$.additional_kwargs.token_usage_attribution.actions"];

function compareStreams(theirs: WireEvent[], ours: WireEvent[]): string[] {
  const diffs: string[] = [];
  // the sequence: what opens and closes a run
  const skel = (evs: WireEvent[]) => eventSkeleton(evs);
  const [ta, oa] = [skel(theirs), skel(ours)];
  if (oa.slice(0, 2).join(" ") !== ta.slice(0, 2).join(" ")) diffs.push(`sse.sequence: starts ${oa.slice(0, 2).join(" ")}`);
  if (oa.at(-1) !== ta.at(-1)) diffs.push(`sse.sequence: ends ${oa.at(-1)}`);
  // `updates` node names: one per middleware hook, as DeerFlow names them
  const tn = new Set(updateNodes(theirs));
  const on = new Set(updateNodes(ours));
  for (const n of tn) if (!on.has(n)) diffs.push(`sse.updates: missing node ${n}`);
  for (const n of on) if (!tn.has(n)) diffs.push(`sse.updates: extra node ${n}`);
  // the order of the nodes both sides have, as a sequence of first appearances
  const order = (evs: WireEvent[], keep: Set<string>) => [...new Set(updateNodes(evs).filter((n) => keep.has(n)))];
  const common = new Set([...tn].filter((n) => on.has(n)));
  if (order(theirs, common).join(",") !== order(ours, common).join(",")) diffs.push("sse.updates: node order differs");
  // payload shapes per common node
  const updates = (evs: WireEvent[], node: string) => evs.filter((e) => e.event === "updates" && node in (e.data as object)).map((e) => (e.data as Record<string, unknown>)[node]);
  for (const n of common) {
    diffs.push(...compareShapes(`sse.updates[${n}]`, shapeOf(updates(theirs, n), ["$.messages", "$.thread_data", "$.sandbox"]), shapeOf(updates(ours, n), ["$.messages", "$.thread_data", "$.sandbox"])));
  }
  // metadata and values frames
  const data = (evs: WireEvent[], ev: string) => evs.filter((e) => e.event === ev).map((e) => e.data);
  diffs.push(...compareShapes("sse.metadata", shapeOf(data(theirs, "metadata")), shapeOf(data(ours, "metadata"))));
  const lastValues = (evs: WireEvent[]) => data(evs, "values").at(-1);
  diffs.push(...splitMessages("sse.values", lastValues(theirs), lastValues(ours), (v) => (v as { messages?: unknown[] }).messages, "$.messages"));
  // messages tuples, by kind: the message and its metadata
  const tuples = (evs: WireEvent[]) => {
    const out = new Map<string, { messages: unknown[]; metas: unknown[] }>();
    for (const t of messageTuples(evs)) {
      const e = out.get(t.kind) ?? { messages: [], metas: [] };
      e.messages.push(t.message);
      e.metas.push(t.meta);
      out.set(t.kind, e);
    }
    return out;
  };
  const tt = tuples(theirs);
  const ot = tuples(ours);
  for (const k of new Set([...tt.keys(), ...ot.keys()])) {
    const a = tt.get(k) ?? { messages: [], metas: [] };
    const b = ot.get(k) ?? { messages: [], metas: [] };
    if (!a.messages.length || !b.messages.length) {
      diffs.push(`sse.messages: ${a.messages.length ? "missing" : "extra"} kind ${k}`);
      continue;
    }
    diffs.push(...compareShapes(`sse.messages[${k}]`, shapeOf(a.messages, MESSAGE_OPAQUE), shapeOf(b.messages, MESSAGE_OPAQUE)));
    diffs.push(...compareShapes(`sse.messages[${k}].meta`, shapeOf(a.metas, ["$.lc_versions"]), shapeOf(b.metas, ["$.lc_versions"])));
  }
  return diffs;
}

function compareReads(theirs: Recording, ours: Recording): string[] {
  const diffs: string[] = [];
  const stateMessages = (v: unknown) => (v as { values?: { messages?: unknown[] } }).values?.messages;
  diffs.push(...splitMessages("state", theirs.state, ours.state, stateMessages, "$.values.messages"));
  diffs.push(...splitMessages("history[0]", (theirs.hist as unknown[])[0], (ours.hist as unknown[])[0], stateMessages, "$.values.messages"));
  diffs.push(...splitMessages("thread", theirs.thread, ours.thread, stateMessages, "$.values.messages"));
  for (const k of ["createdThread", "models"] as const) diffs.push(...compareShapes(k, shapeOf([theirs[k]]), shapeOf([ours[k]])));
  diffs.push(...compareShapes("search[0]", shapeOf([(theirs.search as unknown[])[0]]), shapeOf([(ours.search as unknown[])[0]])));
  diffs.push(...compareShapes("runs[0]", shapeOf([(theirs.runs as unknown[])[0]], ["$.kwargs.input"]), shapeOf([(ours.runs as unknown[])[0]], ["$.kwargs.input"])));
  // response headers a client reads (dates, server name and framing are the HTTP stack's)
  const pick = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).filter(([k]) => !["date", "server", "transfer-encoding", "content-length", "keep-alive"].includes(k)).map(([k, v]) => [k, k === "content-location" ? v.replace(/[0-9a-f-]{36}/g, "<id>") : v]));
  const th = pick(theirs.headers);
  const oh = pick(ours.headers);
  for (const k of new Set([...Object.keys(th), ...Object.keys(oh)])) if (th[k] !== oh[k]) diffs.push(`headers: ${k} ${th[k] ?? "absent"} → ${oh[k] ?? "absent"}`);
  return diffs;
}

describe.skipIf(!CAPTURES)("wire conformance with DeerFlow's captured run", () => {
  let theirs: Recording;
  let ours: Recording;
  let theirEvents: WireEvent[];
  let ourEvents: WireEvent[];
  beforeAll(async () => {
    const json = JSON.parse(fs.readFileSync(path.join(CAPTURES!, "run-write-present-deerflow.json"), "utf8")) as Recording;
    theirs = { ...json, sse: fs.readFileSync(path.join(CAPTURES!, "run-write-present-deerflow-sse.txt"), "utf8") };
    ours = await recordOurs();
    theirEvents = parseSseEvents(theirs.sse);
    ourEvents = parseSseEvents(ours.sse);
  }, 30_000);

  it("reports no undocumented difference", () => {
    const found = [...new Set([...compareStreams(theirEvents, ourEvents), ...compareReads(theirs, ours)])];
    const documented = documentedDifferences();
    const undocumented = found.filter((d) => !documented.has(d));
    expect(undocumented, `document these in docs/server.md ("Wire conformance with DeerFlow") or fix them`).toEqual([]);
  });

  it("streams the run the way DeerFlow does at the points clients depend on", () => {
    expect(ourEvents[0].event).toBe("metadata");
    expect(ourEvents[1].event).toBe("values");
    expect(updateNodes(ourEvents)).not.toContain("__input__");
    expect(ourEvents.at(-1)).toEqual({ event: "end", data: null });
    const tuples = messageTuples(ourEvents);
    // the user's message is echoed first, re-keyed by the date reminder and stamped with the run
    const echo = tuples[0];
    expect(echo.kind).toBe("human");
    expect(echo.message).toMatchObject({ name: "user-input", additional_kwargs: { run_id: expect.any(String), timestamp: expect.stringMatching(/\+00:00$/) } });
    expect(echo.meta.langgraph_node).toBe("DynamicContextMiddleware.before_agent");
    // every model call ends with a `last` chunk carrying usage with token details; tool calls arrive parsed
    const chunks = tuples.filter((t) => t.kind === "AIMessageChunk");
    const lasts = chunks.filter((c) => c.message.chunk_position === "last");
    expect(lasts).toHaveLength(3);
    for (const l of lasts) expect(l.message.usage_metadata).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15, input_token_details: {}, output_token_details: {} });
    const parsed = chunks.flatMap((c) => (c.message.tool_calls as Array<{ name: string }>) ?? []).map((c) => c.name);
    expect(parsed).toEqual(["write_file", "present_files"]);
    for (const c of chunks) {
      expect(stringFormat(String(c.message.id))).toBe("lc_run--uuid7");
      expect(c.meta).toMatchObject({ ls_provider: expect.any(String), ls_model_name: "scripted", model_name: "scripted", agent_name: "default", thinking_enabled: expect.any(Boolean) });
    }
    // tool results: name set, artifact null
    for (const t of tuples.filter((x) => x.kind === "tool")) expect(t.message).toMatchObject({ artifact: null, status: "success" });
  });

  it("a second turn on the thread streams the same way (not just the first run)", () => {
    const evs = parseSseEvents(ours.secondSse!);
    expect(eventSkeleton(evs).slice(0, 2)).toEqual(["metadata", "values"]);
    expect(updateNodes(evs)).not.toContain("__input__");
    expect(new Set(updateNodes(evs))).toEqual(new Set(updateNodes(ourEvents).filter((n) => n !== "tools")));
    const first = messageTuples(evs)[0];
    // the second user message is not re-keyed (the date reminder is already there), so nothing is echoed for it
    expect(first.kind).toBe("AIMessageChunk");
    const human = (evs.filter((e) => e.event === "values").at(-1)!.data as { messages: Array<Record<string, unknown>> }).messages.filter((m) => m.type === "human").at(-1)!;
    expect(human).toMatchObject({ name: "user-input", additional_kwargs: { run_id: expect.any(String), timestamp: expect.stringMatching(/\+00:00$/) } });
  });

  it("answers state, history and runs with DeerFlow's id and timestamp formats", () => {
    const state = ours.state as { checkpoint_id: string; parent_checkpoint_id: string; created_at: string; metadata: Record<string, unknown>; values: { messages: Array<Record<string, unknown>> } };
    expect(stringFormat(state.checkpoint_id)).toBe("uuid6");
    expect(stringFormat(state.parent_checkpoint_id)).toBe("uuid6");
    expect(stringFormat(state.created_at)).toBe("iso-offset");
    expect(state.metadata).toMatchObject({ agent_name: "default", model_name: "scripted", is_plan_mode: false, subagent_enabled: false, parents: {} });
    for (const m of state.values.messages) expect(m).toHaveProperty("name");
    const run = (ours.runs as Array<Record<string, unknown>>)[0];
    expect(stringFormat(String(run.created_at))).toBe("iso-offset");
    expect(stringFormat(String((ours.thread as Record<string, unknown>).updated_at))).toBe("iso-offset");
  });
});
