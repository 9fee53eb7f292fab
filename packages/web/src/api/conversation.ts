/** Regenerate, edit-and-rerun and branches (the gateway's `runs/regenerate/prepare`). */
import { jsonRequest } from "./http";

/** What a prepare call answers: the run to start instead of a plain submit. */
export interface ReplayPlan {
  input: { messages: Array<Record<string, unknown>>; title?: string };
  checkpoint: { checkpoint_ns: string; checkpoint_id: string; checkpoint_map: unknown };
  metadata: Record<string, unknown>;
  target_run_id: string;
  replacement_human_message_id?: string;
  source_message_ids?: string[];
}

function post<T>(path: string, body: unknown, base: string): Promise<T> {
  return jsonRequest<T>("POST", path, body, base);
}

/** `POST /threads/{id}/runs/regenerate/prepare`. */
export function prepareRegenerate(threadId: string, messageId: string, base = ""): Promise<ReplayPlan> {
  return post(`/threads/${encodeURIComponent(threadId)}/runs/regenerate/prepare`, { message_id: messageId }, base);
}

/** `POST /threads/{id}/runs/edit-regenerate/prepare`. */
export function prepareEdit(threadId: string, humanMessageId: string, text: string, base = ""): Promise<ReplayPlan> {
  return post(`/threads/${encodeURIComponent(threadId)}/runs/edit-regenerate/prepare`, { human_message_id: humanMessageId, replacement_text: text }, base);
}

/** `POST /threads/{id}/branches`: a new thread seeded with the conversation up to that answer. */
export function createBranch(threadId: string, messageId: string, base = ""): Promise<{ thread_id: string; parent_thread_id: string }> {
  return post(`/threads/${encodeURIComponent(threadId)}/branches`, { message_id: messageId, message_ids: [messageId] }, base);
}

/** Branch threads of a thread (`threads/search` on `branch_parent_thread_id`). */
export async function listBranches(threadId: string, base = ""): Promise<Array<{ thread_id: string; title: string }>> {
  const rows = await post<Array<{ thread_id: string; values?: { title?: string } }>>("/threads/search", { metadata: { branch_parent_thread_id: threadId }, limit: 50 }, base);
  return rows.map((r) => ({ thread_id: r.thread_id, title: r.values?.title ?? "" }));
}
