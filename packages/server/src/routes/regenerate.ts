import { randomUUID } from "node:crypto";
import { cp } from "node:fs/promises";
import { contentText, ORIGINAL_USER_CONTENT_KEY, stripInjectedUserMessageIdSuffix, threadPaths } from "@deerflow-ts/harness";
import type { DeerFlowRuntime, Message, StateSnapshot } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { userOf } from "../auth";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { checkThreadId, readJson } from "../validate";
import { ownerOf, requireThreadRow } from "./thread-access";
import { createThreadRecord } from "./threads";

const regenerateSchema = z.object({ message_id: z.string().min(1) });
const editSchema = z.object({ human_message_id: z.string().min(1), replacement_text: z.string().min(1) });
const branchSchema = z.object({ message_id: z.string().min(1), message_ids: z.array(z.string()).default([]), title: z.string().max(256).nullish() });

/** Channels a branch does not inherit: the sandbox lease and per-run bookkeeping belong to the parent. */
const BRANCH_EXCLUDED = new Set(["sandbox", "thread_data"]);

/** How far back the checkpoint lineage is walked looking for the turn's base. */
const MAX_LINEAGE_DEPTH = 500;

type Msg = Message & { name?: string | null; additional_kwargs?: Record<string, unknown>; tool_calls?: unknown[] };

function kwargs(m: Msg): Record<string, unknown> {
  return { ...(m.additional_kwargs ?? {}) };
}

function hidden(m: Msg): boolean {
  return m.name === "summary" || kwargs(m).hide_from_ui === true;
}

const visibleHuman = (m: Msg) => m.type === "human" && !hidden(m);
const visibleAi = (m: Msg) => m.type === "ai" && !hidden(m);

/** The text the user typed (input sanitisation keeps it aside when it rewrites the content). */
function userText(m: Msg): string {
  const original = kwargs(m)[ORIGINAL_USER_CONTENT_KEY];
  return typeof original === "string" ? original : contentText(m.content);
}

function cleanForRegenerate(m: Msg): Record<string, unknown> {
  const extra = kwargs(m);
  delete extra[ORIGINAL_USER_CONTENT_KEY];
  delete extra.hide_from_ui;
  const out: Record<string, unknown> = { type: "human", content: [{ type: "text", text: userText(m) }], additional_kwargs: extra };
  // replay the id the client sent: the context reminder re-keys the first message to `{id}__user`
  const id = stripInjectedUserMessageIdSuffix(m.id ?? undefined);
  if (id) out.id = id;
  if (m.name) out.name = m.name;
  return out;
}

function cleanForEdit(m: Msg, id: string, text: string): Record<string, unknown> {
  const src = kwargs(m);
  const extra: Record<string, unknown> = {};
  for (const k of ["files", "referenced_message_contexts"]) if (k in src) extra[k] = structuredClone(src[k]);
  const out: Record<string, unknown> = { type: "human", id, content: [{ type: "text", text }], additional_kwargs: extra };
  if (m.name) out.name = m.name;
  return out;
}

function checkpointRef(snap: StateSnapshot): Record<string, unknown> {
  return { checkpoint_ns: "", checkpoint_id: snap.checkpointId, checkpoint_map: null };
}

/**
 * The checkpoint the turn started from: walking the head's parent lineage
 * (never sideways into other forks), the parent of the oldest checkpoint
 * that still holds the human message.
 */
async function baseBefore(agent: DeerFlowRuntime, threadId: string, head: StateSnapshot, humanId: string): Promise<StateSnapshot> {
  const has = (s: StateSnapshot) => (s.values.messages as Msg[]).some((m) => m.id === humanId);
  let cur = head;
  for (let depth = 0; depth < MAX_LINEAGE_DEPTH; depth++) {
    if (!has(cur)) return cur;
    if (!cur.parentCheckpointId) break;
    const parent = await agent.readState(threadId, cur.parentCheckpointId);
    if (!parent) break;
    cur = parent;
  }
  throw new HttpError(409, "Could not find the checkpoint before this turn; it can no longer be regenerated");
}

/**
 * DeerFlow's replay preparation: `regenerate/prepare` and
 * `edit-regenerate/prepare` answer the `input`, `checkpoint` and `metadata`
 * a client passes to `runs/stream` to rerun the latest turn from the
 * checkpoint before it; the transcript then hides the superseded run.
 */
export function registerRegenerateRoutes(app: Hono, ctx: GatewayContext): void {
  const max = ctx.options.maxBodyBytes;

  const head = async (c: Context, threadId: string) => {
    requireThreadRow(c); // loaded and authorised once by the thread-access middleware
    const snap = await ctx.runtime.readState(threadId);
    if (!snap) throw new HttpError(404, `Thread ${threadId} has no checkpoint`);
    return { agent: ctx.runtime, snap, messages: (snap.values.messages ?? []) as Msg[] };
  };

  /** Which run produced an AI message: the transcript first, then the run id stamped on the user message. */
  const sourceRun = async (threadId: string, aiId: string, human: Msg): Promise<string> => {
    const fromTranscript = (await ctx.stores.messages.runIds(threadId)).get(aiId);
    if (fromTranscript) return fromTranscript;
    const stamped = kwargs(human).run_id;
    if (typeof stamped === "string" && stamped) return stamped;
    throw new HttpError(409, "Could not find source run for assistant message");
  };

  const title = (snap: StateSnapshot) => {
    const t = (snap.values as Record<string, unknown>).title;
    return typeof t === "string" && t ? t : undefined;
  };

  app.post("/threads/:thread_id/runs/regenerate/prepare", async (c) => {
    const threadId = checkThreadId(c.req.param("thread_id"));
    const body = await readJson(c, regenerateSchema, max);
    const { agent, snap, messages } = await head(c, threadId);
    const idx = messages.findIndex((m) => m.id === body.message_id);
    let human: Msg | undefined;
    let targetRun: string | undefined;
    if (idx < 0) {
      // an answer cut off mid-stream never reached a checkpoint: the interrupted run is the target
      human = [...messages].reverse().find(visibleHuman);
      const stamped = human ? kwargs(human).run_id : undefined;
      const rec = typeof stamped === "string" ? await ctx.stores.runs.get(stamped) : undefined;
      if (!rec || rec.threadId !== threadId || rec.status !== "interrupted") throw new HttpError(404, `Message ${body.message_id} not found`);
      targetRun = rec.runId;
    } else {
      if (!visibleAi(messages[idx])) throw new HttpError(409, "Only visible assistant messages can be regenerated");
      if ([...messages].reverse().find(visibleAi)?.id !== body.message_id) throw new HttpError(409, "Only the latest assistant message can be regenerated");
      human = [...messages.slice(0, idx)].reverse().find(visibleHuman);
      if (!human) throw new HttpError(409, "Could not find the user message for this assistant response");
      targetRun = await sourceRun(threadId, body.message_id, human);
    }
    if (!human) throw new HttpError(409, "Could not find the user message for this assistant response");
    if (!human.id) throw new HttpError(409, "The source user message is missing an id");
    const base = await baseBefore(agent, threadId, snap, human.id);
    const input: Record<string, unknown> = { messages: [cleanForRegenerate(human)] };
    // the base may predate a rename: replay the current title so the rerun keeps it
    if (title(snap)) input.title = title(snap);
    return c.json({
      input,
      checkpoint: checkpointRef(base),
      metadata: { regenerate_from_message_id: body.message_id, regenerate_from_run_id: targetRun, regenerate_checkpoint_id: base.checkpointId },
      target_run_id: targetRun,
    });
  });

  app.post("/threads/:thread_id/runs/edit-regenerate/prepare", async (c) => {
    const threadId = checkThreadId(c.req.param("thread_id"));
    const body = await readJson(c, editSchema, max);
    const text = body.replacement_text.trim();
    if (!text) throw new HttpError(409, "Edited message cannot be empty");
    const { agent, snap, messages } = await head(c, threadId);
    const goal = (snap.values as Record<string, unknown>).goal as { status?: string } | null | undefined;
    if (goal?.status === "active") throw new HttpError(409, "Cannot edit while a goal is active");
    let humanIdx = -1;
    for (let i = messages.length - 1; i >= 0; i--) if (visibleHuman(messages[i])) { humanIdx = i; break; }
    if (humanIdx < 0 || messages[humanIdx].id !== body.human_message_id) throw new HttpError(409, "Only the latest completed user turn can be edited");
    const human = messages[humanIdx];
    let aiIdx = -1;
    for (let i = humanIdx + 1; i < messages.length; i++) if (visibleAi(messages[i])) aiIdx = i;
    const ai = aiIdx >= 0 ? messages[aiIdx] : undefined;
    if (!ai || !contentText(ai.content).trim() || (ai.tool_calls?.length ?? 0) > 0) throw new HttpError(409, "Only completed assistant text turns can be edited");
    if (text === userText(human).trim()) throw new HttpError(409, "Edited message is unchanged");
    if (!ai.id) throw new HttpError(409, "The source assistant message is missing an id");
    const base = await baseBefore(agent, threadId, snap, human.id!);
    const targetRun = await sourceRun(threadId, ai.id, human);
    const rec = await ctx.stores.runs.get(targetRun);
    if (!rec || rec.threadId !== threadId) throw new HttpError(409, "Could not find source run for assistant message");
    if (rec.status !== "success") throw new HttpError(409, "Only successful assistant runs can be edited and rerun");
    const replacementId = randomUUID();
    const group = rec.metadata.edit_version_group_id;
    const input: Record<string, unknown> = { messages: [cleanForEdit(human, replacementId, text)] };
    // an untitled base belongs to a thread not yet named: keep it untitled so the edited prompt names it
    if (title(base) && title(snap)) input.title = title(snap);
    return c.json({
      input,
      checkpoint: checkpointRef(base),
      metadata: {
        replay_kind: "edit",
        regenerate_from_message_id: ai.id,
        regenerate_from_run_id: targetRun,
        regenerate_checkpoint_id: base.checkpointId,
        edit_from_message_id: human.id,
        edit_message_id: replacementId,
        edit_version_group_id: typeof group === "string" && group ? group : human.id,
      },
      target_run_id: targetRun,
      replacement_human_message_id: replacementId,
      source_message_ids: messages.slice(humanIdx, aiIdx + 1).map((m) => m.id).filter((id): id is string => !!id),
    });
  });

  app.post("/threads/:thread_id/branches", async (c) => {
    const threadId = checkThreadId(c.req.param("thread_id"));
    const body = await readJson(c, branchSchema, max);
    const parent = requireThreadRow(c);
    if (parent.metadata.deerflow_sidecar === true) throw new HttpError(409, "Branching is only available in the main conversation.");
    const targets = new Set([body.message_id, ...body.message_ids]);
    const { agent, snap } = await head(c, threadId);
    // the newest checkpoint of the target turn: it holds the answer and no later user message
    let cur: StateSnapshot | undefined = snap;
    let found: StateSnapshot | undefined;
    for (let depth = 0; cur && depth < MAX_LINEAGE_DEPTH; depth++) {
      const msgs = (cur.values.messages ?? []) as Msg[];
      const at = msgs.findIndex((m) => !!m.id && targets.has(m.id));
      if (at >= 0 && !msgs.slice(at + 1).some(visibleHuman)) {
        found = cur;
        break;
      }
      cur = cur.parentCheckpointId ? await agent.readState(threadId, cur.parentCheckpointId) : undefined;
    }
    if (!found) throw new HttpError(409, "This turn can no longer be branched from.");
    const foundCount = ((found.values.messages ?? []) as Msg[]).length;
    const fromLatest = !((snap.values.messages ?? []) as Msg[]).slice(foundCount).some(visibleHuman);
    const newId = randomUUID();
    const now = new Date().toISOString();
    const metadata = {
      deerflow_branch: true,
      branch_parent_thread_id: threadId,
      branch_parent_checkpoint_id: found.checkpointId,
      branch_parent_message_id: body.message_id,
      branch_created_at: now,
    };
    const values = Object.fromEntries(Object.entries(found.values).filter(([k]) => !BRANCH_EXCLUDED.has(k)));
    await agent.updateState(newId, values, { asNode: "branch" });
    const rec = await createThreadRecord(ctx, c, newId, metadata);
    const parentTitle = parent.displayName || (typeof values.title === "string" ? values.title : "");
    const displayName = body.title || (parentTitle ? `${parentTitle} (branch)` : null);
    if (displayName) await ctx.stores.threads.update(newId, { displayName, updatedAt: rec.updatedAt });
    // the transcript feed reads the message store, not checkpoints: seed it so the inherited turns show
    const msgs = ((found.values.messages ?? []) as Msg[]).filter((m) => m.type === "human" || m.type === "ai" || m.type === "tool");
    let historySeedMode = "skipped_empty";
    if (msgs.length) {
      try {
        await ctx.stores.messages.record(newId, `branch-seed-${newId}`, msgs as unknown as Array<Record<string, unknown>>, now);
        historySeedMode = "seeded";
      } catch {
        historySeedMode = "failed";
      }
    }
    // files are not checkpointed: copying today's files onto an older turn would leak later work into it
    let workspaceCloneMode = "skipped_historical_turn";
    if (fromLatest) {
      try {
        // from the parent owner's folder into the caller's (the same user: the parent was authorised above)
        const from = threadPaths(ctx.options.baseDir, ownerOf(ctx, parent.userId), threadId).userData;
        await cp(from, threadPaths(ctx.options.baseDir, userOf(c).id, newId).userData, { recursive: true, errorOnExist: false, force: false });
        workspaceCloneMode = "copied";
      } catch (err) {
        workspaceCloneMode = (err as NodeJS.ErrnoException).code === "ENOENT" ? "skipped_empty" : "failed";
      }
    }
    return c.json({
      thread_id: newId,
      parent_thread_id: threadId,
      parent_checkpoint_id: found.checkpointId,
      branched_from_message_id: body.message_id,
      workspace_clone_mode: workspaceCloneMode,
      history_seed_mode: historySeedMode,
    });
  });
}
