import { afterEach, describe, expect, it } from "vitest";
import { humanInput, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;

interface Msg {
  type: string;
  id: string;
  content: unknown;
  additional_kwargs?: Record<string, unknown>;
}

const text = (m: Msg) => (typeof m.content === "string" ? m.content : (m.content as Array<{ text: string }>).map((b) => b.text).join(""));

async function twoTurns(steps: string[]) {
  gw = await startTestGateway({ steps });
  const api = `${gw.url}/api`;
  await json(postJson(`${api}/threads`, { thread_id: "t1" }));
  await json(postJson(`${api}/threads/t1/runs/wait`, { input: humanInput("first question") }));
  await json(postJson(`${api}/threads/t1/runs/wait`, { input: humanInput("second question") }));
  const state = await json<{ values: { messages: Msg[] }; checkpoint_id: string }>(fetch(`${api}/threads/t1/state`));
  return { api, messages: state.values.messages };
}

describe("regenerate / edit-regenerate / branches", () => {
  it("regenerate/prepare forks the latest answer from the checkpoint before its user turn", async () => {
    const { api, messages } = await twoTurns(["answer one", "answer two", "answer two, retried"]);
    expect(messages.map(text)).toEqual(["first question", "answer one", "second question", "answer two"]);
    const [, firstAi, secondHuman, secondAi] = messages;
    const runs = await json<Array<{ run_id: string }>>(fetch(`${api}/threads/t1/runs`));

    // not the latest answer / not an AI message / unknown id
    expect((await postJson(`${api}/threads/t1/runs/regenerate/prepare`, { message_id: firstAi.id })).status).toBe(409);
    expect((await postJson(`${api}/threads/t1/runs/regenerate/prepare`, { message_id: secondHuman.id })).status).toBe(409);
    expect((await postJson(`${api}/threads/t1/runs/regenerate/prepare`, { message_id: "nope" })).status).toBe(404);
    expect((await postJson(`${api}/threads/t1/runs/regenerate/prepare`, {})).status).toBe(422);

    const prep = await json<{ input: { messages: Msg[] }; checkpoint: { checkpoint_id: string; checkpoint_ns: string }; metadata: Record<string, string>; target_run_id: string }>(
      postJson(`${api}/threads/t1/runs/regenerate/prepare`, { message_id: secondAi.id }),
    );
    expect(prep.target_run_id).toBe(runs[0].run_id); // newest first: the second run
    expect(prep.metadata).toEqual({ regenerate_from_message_id: secondAi.id, regenerate_from_run_id: runs[0].run_id, regenerate_checkpoint_id: prep.checkpoint.checkpoint_id });
    expect(prep.checkpoint).toMatchObject({ checkpoint_ns: "", checkpoint_map: null });
    expect(prep.input.messages).toHaveLength(1);
    expect(prep.input.messages[0]).toMatchObject({ type: "human", id: secondHuman.id, content: [{ type: "text", text: "second question" }] });
    // the base checkpoint is the middle of the thread: after turn one, before turn two
    const base = await json<{ values: { messages: Msg[] } }>(fetch(`${api}/threads/t1/state/${prep.checkpoint.checkpoint_id}`));
    expect(base.values.messages.map(text)).toEqual(["first question", "answer one"]);

    await json(postJson(`${api}/threads/t1/runs/wait`, { input: prep.input, checkpoint: prep.checkpoint, metadata: prep.metadata }));
    const after = await json<{ values: { messages: Msg[] } }>(fetch(`${api}/threads/t1/state`));
    expect(after.values.messages.map(text)).toEqual(["first question", "answer one", "second question", "answer two, retried"]);

    // the transcript hides the superseded run
    const page = await json<{ data: Array<{ run_id: string; content: Msg }> }>(fetch(`${api}/threads/t1/messages/page`));
    expect(page.data.map((r) => text(r.content))).toEqual(["first question", "answer one", "second question", "answer two, retried"]);
    // the replayed user message keeps its id, so its row stays with the old run; the old answer is gone
    expect(page.data.filter((r) => r.run_id === runs[0].run_id).map((r) => r.content.type)).toEqual(["human"]);
  });

  it("edit-regenerate/prepare replaces the latest user message and reruns from before it", async () => {
    const { api, messages } = await twoTurns(["answer one", "answer two", "answer to the edit"]);
    const [firstHuman, , secondHuman, secondAi] = messages;
    const edit = (human_message_id: string, replacement_text: string) => postJson(`${api}/threads/t1/runs/edit-regenerate/prepare`, { human_message_id, replacement_text });
    expect((await edit(firstHuman.id, "changed")).status).toBe(409);
    expect((await edit(secondHuman.id, "second question")).status).toBe(409);
    expect((await edit(secondHuman.id, "   ")).status).toBe(409);
    const prep = await json<{
      input: { messages: Msg[] };
      checkpoint: { checkpoint_id: string };
      metadata: Record<string, string>;
      replacement_human_message_id: string;
      source_message_ids: string[];
      target_run_id: string;
    }>(edit(secondHuman.id, "  a better second question "));
    expect(prep.source_message_ids).toEqual([secondHuman.id, secondAi.id]);
    expect(prep.input.messages[0]).toEqual({ type: "human", id: prep.replacement_human_message_id, content: [{ type: "text", text: "a better second question" }], additional_kwargs: {} });
    expect(prep.metadata).toMatchObject({
      replay_kind: "edit",
      regenerate_from_message_id: secondAi.id,
      regenerate_from_run_id: prep.target_run_id,
      edit_from_message_id: secondHuman.id,
      edit_message_id: prep.replacement_human_message_id,
      edit_version_group_id: secondHuman.id,
    });
    await json(postJson(`${api}/threads/t1/runs/wait`, { input: prep.input, checkpoint: prep.checkpoint, metadata: prep.metadata }));
    const after = await json<{ values: { messages: Msg[] } }>(fetch(`${api}/threads/t1/state`));
    expect(after.values.messages.map(text)).toEqual(["first question", "answer one", "a better second question", "answer to the edit"]);
    const runs = await json<Array<{ metadata: Record<string, unknown> }>>(fetch(`${api}/threads/t1/runs`));
    expect(runs[0].metadata).toMatchObject({ replay_kind: "edit", regenerate_from_run_id: prep.target_run_id });
  });

  it("branches a thread from an earlier turn: a new thread seeded with that turn, listed by its parent metadata", async () => {
    const { api, messages } = await twoTurns(["answer one", "answer two", "branch answer"]);
    const firstAi = messages[1];
    const res = await json<Record<string, string>>(postJson(`${api}/threads/t1/branches`, { message_id: firstAi.id, message_ids: [firstAi.id] }));
    expect(res).toMatchObject({ parent_thread_id: "t1", branched_from_message_id: firstAi.id, workspace_clone_mode: "skipped_historical_turn", history_seed_mode: "seeded" });
    const branch = await json<{ values: { messages: Msg[] }; metadata: Record<string, unknown> }>(fetch(`${api}/threads/${res.thread_id}`));
    expect(branch.values.messages.map(text)).toEqual(["first question", "answer one"]);
    expect(branch.metadata).toMatchObject({ deerflow_branch: true, branch_parent_thread_id: "t1", branch_parent_checkpoint_id: res.parent_checkpoint_id });
    const listed = await json<Array<{ thread_id: string }>>(postJson(`${api}/threads/search`, { metadata: { branch_parent_thread_id: "t1" } }));
    expect(listed.map((t) => t.thread_id)).toEqual([res.thread_id]);
    const page = await json<{ data: unknown[] }>(fetch(`${api}/threads/${res.thread_id}/messages/page`));
    expect(page.data).toHaveLength(2);
    // the branch continues on its own
    await json(postJson(`${api}/threads/${res.thread_id}/runs/wait`, { input: humanInput("branch question") }));
    const cont = await json<{ values: { messages: Msg[] } }>(fetch(`${api}/threads/${res.thread_id}/state`));
    expect(cont.values.messages.map(text)).toEqual(["first question", "answer one", "branch question", "branch answer"]);
    expect((await postJson(`${api}/threads/t1/branches`, { message_id: "nope" })).status).toBe(409);
  });
});
