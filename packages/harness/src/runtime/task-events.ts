import { randomUUID } from "node:crypto";
import { errorMessage } from "../errors";
import type { Interrupt, StreamMode } from "./types";

/**
 * One task of a run's loop, as LangGraph names its tasks: a node that ran in a step (a middleware hook such as
 * `SandboxMiddleware.before_agent`, `model`), or one tool call pushed to `tools`. Its id is the `<task-id>` of the
 * node's checkpoint namespace (`<node>:<task-id>`), so the `tasks`/`debug` frames, the `messages` metadata and a
 * nested run's namespace all name the same task.
 */
export interface RunTask {
  readonly id: string;
  readonly name: string;
  readonly step: number;
  readonly triggers: string[];
  readonly path: unknown[];
}

/** The checkpoint namespace of a task: `<node>:<task-id>`. */
export function taskNamespace(task: Pick<RunTask, "name" | "id">): string {
  return `${task.name}:${task.id}`;
}

/** Where {@link TaskEvents} sends what it emits. */
export interface TaskEventSink {
  /** Whether the run streams this mode. */
  has(mode: StreamMode): boolean;
  emit(mode: "tasks" | "debug", data: unknown): void;
}

/** What a debug `checkpoint` frame says about the checkpoint just written. */
export interface DebugCheckpoint {
  threadId: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  values: unknown;
  metadata: Record<string, unknown>;
  next: string[];
  step: number;
}

function configOf(threadId: string, checkpointId: string, ns = ""): Record<string, unknown> {
  return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } };
}

/**
 * The `tasks` and `debug` stream modes as LangGraph emits them: a task's start (`{id, name, input, triggers}`) and
 * result (`{id, name, error, result, interrupts}`), and in `debug` the same wrapped as `{type: "task" |
 * "task_result", timestamp, step, payload}` plus a `checkpoint` frame for every checkpoint written. Nothing is
 * built when neither mode is streamed.
 */
export class TaskEvents {
  constructor(private readonly sink: TaskEventSink) {}

  /** Start a task of `node` at `step`: a node pulled by its branch, or (with `push`) a tool call pushed to `tools`. */
  start(node: string, step: number, input: unknown, push?: number): RunTask {
    const task: RunTask = {
      id: randomUUID(),
      name: node,
      step,
      triggers: push === undefined ? [`branch:to:${node}`] : ["__pregel_push"],
      path: push === undefined ? ["__pregel_pull", node] : ["__pregel_push", push, false],
    };
    const tasks = this.sink.has("tasks");
    const debug = this.sink.has("debug");
    if (!tasks && !debug) return task;
    const payload = { id: task.id, name: node, input, triggers: task.triggers };
    if (tasks) this.sink.emit("tasks", payload);
    if (debug) this.sink.emit("debug", { type: "task", timestamp: new Date().toISOString(), step, payload });
    return task;
  }

  /** A task ended: what it wrote (null: nothing), the error it failed with, the interrupts it raised. */
  finish(task: RunTask, result: Record<string, unknown> | null, error?: unknown, interrupts: readonly Interrupt[] = []): void {
    const tasks = this.sink.has("tasks");
    const debug = this.sink.has("debug");
    if (!tasks && !debug) return;
    const payload = {
      id: task.id,
      name: task.name,
      error: error === undefined ? null : errorMessage(error),
      result: result ?? {},
      interrupts: interrupts.map((i) => ({ value: i.value, id: i.id })),
    };
    if (tasks) this.sink.emit("tasks", payload);
    if (debug) this.sink.emit("debug", { type: "task_result", timestamp: new Date().toISOString(), step: task.step, payload });
  }

  /** End a task that threw; returns the error for the caller to rethrow. */
  failed(task: RunTask, err: unknown): unknown {
    this.finish(task, null, err);
    return err;
  }

  /** A checkpoint was written (debug mode only). */
  checkpoint(cp: DebugCheckpoint): void {
    if (!this.sink.has("debug")) return;
    this.sink.emit("debug", {
      type: "checkpoint",
      timestamp: new Date().toISOString(),
      step: cp.step,
      payload: {
        config: configOf(cp.threadId, cp.checkpointId),
        parent_config: cp.parentCheckpointId ? configOf(cp.threadId, cp.parentCheckpointId) : null,
        values: cp.values,
        metadata: cp.metadata,
        next: cp.next,
        tasks: cp.next.map((name) => ({ id: randomUUID(), name, interrupts: [], state: null })),
      },
    });
  }
}
