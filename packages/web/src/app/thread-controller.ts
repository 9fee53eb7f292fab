import { STREAM_MODES, type ApiClient } from "../api/client";
import { prepareEdit, prepareRegenerate } from "../api/conversation";
import type { ReplayPlan } from "../api/conversation";
import { cancelRun, uploadFiles } from "../api/rest";
import { addNotice, applyStreamPart, applyValues, dismissNotice, emptyView } from "../stream/reducer";
import { forgetRun, recalledRun, rememberRun, TERMINAL_RUN_STATUSES, type KeyValueStorage } from "../stream/session";
import { cancelRunning } from "../stream/subtasks";
import { stoppedRunIds, stoppedTurnIds } from "../stream/stopped-runs";
import { buildClarificationAnswer, buildHumanMessage, buildRunContext, type ChatSettings, type UploadedFile } from "../stream/settings";
import type { StreamPart, ThreadView, WireMessage } from "../stream/types";

/** Drives one thread: loads state, starts/joins/cancels runs and folds the stream into a {@link ThreadView}. */
export class ThreadController {
  private view: ThreadView = emptyView();
  private listeners = new Set<() => void>();
  private abort?: AbortController;
  private exists = false;
  private gen = 0;
  private lastSubmit?: { message: Record<string, unknown>; settings: ChatSettings };
  /** Called after a run finishes (so the sidebar can refresh titles). */
  onRunFinished?: (threadId: string) => void;
  /** Called when a new thread has been created server-side. */
  onThreadCreated?: (threadId: string) => void;

  constructor(
    private readonly client: ApiClient,
    private readonly storage: KeyValueStorage,
    private readonly base = "",
  ) {}

  /** Current view (stable reference between changes, for useSyncExternalStore). */
  getView = (): ThreadView => this.view;

  /** Subscribes to view changes. */
  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  private set(view: ThreadView): void {
    this.view = view;
    for (const l of this.listeners) l();
  }

  private apply(part: StreamPart): void {
    this.set(applyStreamPart(this.view, part));
  }

  /** Starts a fresh, not yet persisted thread. */
  newThread(threadId: string): void {
    this.abort?.abort();
    this.gen++;
    this.exists = false;
    this.set(emptyView(threadId));
  }

  /** Loads an existing thread's state and re-joins its active run if one is remembered. */
  async load(threadId: string): Promise<void> {
    this.abort?.abort();
    const gen = ++this.gen;
    this.exists = true;
    this.set({ ...emptyView(threadId), phase: "starting" });
    try {
      const state = await this.client.threads.getState(threadId);
      if (gen !== this.gen) return;
      this.set({ ...applyValues(this.view, (state?.values ?? {}) as Record<string, unknown>, null), phase: "idle" });
      await this.loadStoppedTurns(threadId, gen, (state?.interrupts?.length ?? 0) > 0);
    } catch (err) {
      if (gen !== this.gen) return;
      const status = (err as { status?: number }).status;
      if (status === 404) {
        this.exists = false;
        this.set({ ...this.view, phase: "idle" });
      } else {
        this.set({ ...this.view, phase: "error", error: `Could not load the conversation: ${describe(err)}` });
        return;
      }
    }
    const runId = recalledRun(this.storage, threadId);
    if (!runId) return;
    try {
      const run = await this.client.runs.get(threadId, runId);
      if (gen !== this.gen) return;
      if (TERMINAL_RUN_STATUSES.has(run.status)) {
        forgetRun(this.storage, threadId);
        // It ended after the state above was read (a reload just as the answer finished): that state may not
        // have the answer yet, and nothing else would bring it, so read it again.
        await this.refreshState(threadId);
        return;
      }
    } catch {
      forgetRun(this.storage, threadId);
      return;
    }
    await this.join(threadId, runId);
  }

  /** Re-joins a running run from the start of its retained buffer (Last-Event-ID -1). */
  async join(threadId: string, runId: string): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    this.set({ ...this.view, runId, phase: "streaming" });
    await this.consume(
      threadId,
      this.client.runs.joinStream(threadId, runId, { signal: abort.signal, lastEventId: "-1", streamMode: STREAM_MODES }),
      abort,
    );
  }

  /** Sends a user message (uploading attachments first) and streams the run. */
  async send(text: string, files: File[], settings: ChatSettings): Promise<void> {
    const threadId = this.view.threadId;
    if (!threadId) return;
    let uploaded: UploadedFile[] = [];
    if (files.length) {
      try {
        const infos = await uploadFiles(threadId, files, this.base);
        uploaded = infos.map((f) => ({ filename: f.filename, size: f.size, path: f.virtual_path, status: "uploaded" }));
      } catch (err) {
        this.set(addNotice(this.view, "error", `Upload failed: ${describe(err)}`));
        return;
      }
    }
    await this.submit(buildHumanMessage(text, uploaded), settings);
  }

  /** Answers a clarification card with the hidden `human_input_response` message, as a new run. */
  async answerClarification(req: { requestId: string; source: string }, answer: { optionId?: string; value: string }, settings: ChatSettings): Promise<void> {
    await this.submit(buildClarificationAnswer(req, answer), settings);
  }

  /** Re-submits the last message (after an error). */
  async retry(): Promise<void> {
    if (this.lastSubmit) {
      const { message, settings } = this.lastSubmit;
      // The optimistic copy of the failed message is dropped; the server state has the real one if it got there.
      this.set({ ...this.view, messages: this.view.messages.filter((m) => !m.id?.startsWith("local-")) });
      await this.submit(message, settings);
    } else if (this.view.threadId) {
      await this.load(this.view.threadId);
    }
  }

  /** Reruns the latest answer from the checkpoint before its user turn (`regenerate/prepare`). */
  async regenerate(messageId: string, settings: ChatSettings): Promise<void> {
    await this.replay(() => prepareRegenerate(this.view.threadId!, messageId, this.base), settings);
  }

  /** Replaces the latest user message with `text` and reruns from before it (`edit-regenerate/prepare`). */
  async editMessage(humanMessageId: string, text: string, settings: ChatSettings): Promise<void> {
    await this.replay(() => prepareEdit(this.view.threadId!, humanMessageId, text, this.base), settings);
  }

  private async replay(prepare: () => Promise<ReplayPlan>, settings: ChatSettings): Promise<void> {
    if (!this.view.threadId || this.isRunning()) return;
    let plan: ReplayPlan;
    try {
      plan = await prepare();
    } catch (err) {
      this.set(addNotice(this.view, "error", describe(err)));
      return;
    }
    const message = plan.input.messages[0];
    await this.submit(message, settings, plan);
  }

  private async submit(message: Record<string, unknown>, settings: ChatSettings, replay?: ReplayPlan): Promise<void> {
    const threadId = this.view.threadId;
    if (!threadId || this.isRunning()) return;
    this.lastSubmit = { message, settings };
    const optimistic = { ...message, id: `local-${Date.now()}` } as WireMessage;
    // a replay drops the turn it reruns: the view keeps what came before the replayed user message
    let kept = this.view.messages;
    if (replay) {
      const from = kept.findIndex((m) => m.id === (replay.source_message_ids?.[0] ?? message.id));
      if (from >= 0) kept = kept.slice(0, from);
    }
    this.set({ ...this.view, messages: [...kept, optimistic], phase: "starting", error: undefined });
    const abort = new AbortController();
    this.abort = abort;
    try {
      if (!this.exists) {
        // a custom agent's chat is marked in the thread metadata, as DeerFlow's UI does, so a reload keeps the agent
        await this.client.threads.create({ thread_id: threadId, if_exists: "do_nothing", ...(settings.agentName ? { metadata: { agent_name: settings.agentName } } : {}) });
        this.exists = true;
        this.onThreadCreated?.(threadId);
      }
      const stream = this.client.runs.stream(threadId, "lead_agent", {
        body: {
          input: replay ? replay.input : { messages: [message] },
          ...(replay ? { checkpoint: replay.checkpoint, metadata: replay.metadata } : {}),
          config: { recursion_limit: 1000 },
          context: buildRunContext(settings, threadId),
          stream_mode: [...STREAM_MODES],
          on_disconnect: "continue",
        },
        signal: abort.signal,
        onRunCreated: ({ run_id }) => {
          rememberRun(this.storage, threadId, run_id);
          if (this.view.threadId === threadId) this.set({ ...this.view, runId: run_id });
        },
      });
      await this.consume(threadId, stream, abort);
    } catch (err) {
      if (abort.signal.aborted) return;
      this.fail(`Could not start the run: ${describe(err)}`);
    }
  }

  private async consume(threadId: string, stream: AsyncIterable<StreamPart>, abort: AbortController): Promise<void> {
    try {
      for await (const part of stream) {
        if (abort.signal.aborted || this.view.threadId !== threadId) return;
        if (part.event === "metadata") {
          const runId = (part.data as { run_id?: string })?.run_id;
          if (runId) rememberRun(this.storage, threadId, runId);
        }
        this.apply(part);
      }
      // Stopped (or switched away): the stream ends quietly, and what the view shows stays as it is.
      if (abort.signal.aborted || this.view.threadId !== threadId) return;
      if (this.view.phase !== "error" && this.view.phase !== "cancelled") this.set({ ...this.view, phase: "done", streamingIds: [] });
      forgetRun(this.storage, threadId);
      this.onRunFinished?.(threadId);
      await this.refreshState(threadId);
    } catch (err) {
      if (abort.signal.aborted || this.view.threadId !== threadId) return;
      this.fail(`Connection lost: ${describe(err)}`);
    }
  }

  /**
   * Which turns the user stopped, from the thread's run records: the state keeps no trace of a Stop when no
   * sub-agent was cut off, so a reopened thread reads the runs that ended `interrupted` and the human message
   * each one answered. The transcript is read only when there is such a run. A failure leaves the marks out.
   */
  private async loadStoppedTurns(threadId: string, gen: number, pendingInterrupt: boolean): Promise<void> {
    try {
      const stopped = stoppedRunIds(await this.client.runs.list(threadId), pendingInterrupt);
      if (!stopped.size || gen !== this.gen) return;
      const page = await this.client.threads.messagesPage(threadId);
      if (gen !== this.gen) return;
      this.set({ ...this.view, stoppedTurns: stoppedTurnIds(stopped, page.data) });
    } catch {
      /* the conversation is shown without the marks */
    }
  }

  private async refreshState(threadId: string): Promise<void> {
    try {
      const state = await this.client.threads.getState(threadId);
      if (this.view.threadId === threadId && !this.isRunning()) this.set(applyValues(this.view, (state?.values ?? {}) as Record<string, unknown>, null));
    } catch {
      /* the streamed view is already complete */
    }
  }

  private fail(text: string): void {
    // Shown once, in the banner with its Retry button (not also as a toast).
    this.set({ ...this.view, phase: "error", error: text, streamingIds: [] });
  }

  /** True while a run is starting or streaming. */
  isRunning(): boolean {
    return this.view.phase === "starting" || this.view.phase === "streaming";
  }

  /** Stops the current run: aborts the stream and asks the server to interrupt it. */
  async stop(): Promise<void> {
    const { threadId, runId } = this.view;
    this.abort?.abort();
    // The stream is closed now, so no task_cancelled event will arrive: the cards say it themselves.
    this.set({ ...this.view, phase: "cancelled", streamingIds: [], subtasks: cancelRunning(this.view.subtasks) });
    if (threadId) forgetRun(this.storage, threadId);
    if (threadId && runId) {
      try {
        await cancelRun(threadId, runId, this.base);
      } catch (err) {
        this.set(addNotice(this.view, "error", `Cancel failed: ${describe(err)}`));
      }
    }
  }

  /** Dismisses a toast. */
  dismiss(id: number): void {
    this.set(dismissNotice(this.view, id));
  }

  /** Sets the displayed title (after a rename). */
  setTitle(title: string): void {
    this.set({ ...this.view, title });
  }
}

/** Human-readable error text. */
export function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
