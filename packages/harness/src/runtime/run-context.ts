import { inspect } from "node:util";
import type { RunContext } from "../tools/types";
import { DEFAULT_SETTINGS, readRuntimeOptions } from "./run-settings";
import type { LeadRuntimeOptions, RunContextSettings } from "./run-settings";

/** Who a run is for: fixed by whoever starts the run (the gateway: the signed-in caller), never by the model. */
export interface RunIdentity {
  readonly threadId: string;
  readonly runId: string;
  readonly userId: string;
  /** The custom agent the run talks to; null for the lead agent. */
  readonly agentName: string | null;
}

const MASK = "***";

/**
 * A run's request-scoped secrets (the `secrets` mapping of a run request,
 * which skills bind by their `required-secrets` names). The values are only
 * reachable through {@link get}: serialising or printing the object shows
 * the names with masked values, so a context copied into a log line, a
 * checkpoint or a run record never carries them.
 */
export class RunSecrets {
  /** A run without secrets. */
  static readonly none = new RunSecrets(new Map());

  readonly #values: ReadonlyMap<string, string>;

  private constructor(values: ReadonlyMap<string, string>) {
    this.#values = values;
  }

  /**
   * Secrets from a request's `secrets` mapping: non-empty string values
   * only (anything else is not a secret a skill can bind).
   */
  static from(mapping: unknown): RunSecrets {
    if (mapping instanceof RunSecrets) return mapping;
    if (!mapping || typeof mapping !== "object" || Array.isArray(mapping)) return RunSecrets.none;
    const values = new Map<string, string>();
    for (const [name, value] of Object.entries(mapping as Record<string, unknown>)) if (typeof value === "string" && value.length > 0) values.set(name, value);
    return values.size ? new RunSecrets(values) : RunSecrets.none;
  }

  /** The value supplied for `name`, if any. */
  get(name: string): string | undefined {
    return this.#values.get(name);
  }

  /** The supplied names. */
  names(): string[] {
    return [...this.#values.keys()];
  }

  get size(): number {
    return this.#values.size;
  }

  /** Names with masked values: what `JSON.stringify` (and so any stored copy) sees. */
  toJSON(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.#values.keys()) out[name] = MASK;
    return out;
  }

  [inspect.custom](): string {
    return `RunSecrets(${this.names().join(", ")})`;
  }
}

/** What {@link createRunContext} builds a run context from. */
export interface RunContextInput {
  threadId: string;
  runId: string;
  /** The request's context in DeerFlow's wire names (`user_id`, `agent_name`, `secrets`, …). */
  context?: Readonly<Record<string, unknown>>;
  /** The request's `configurable` (run settings may come from either; `context` wins). */
  configurable?: Readonly<Record<string, unknown>>;
  /** Typed identity; wins over the wire names. */
  identity?: Partial<Pick<RunIdentity, "userId" | "agentName">>;
  /** Typed settings, already parsed (`readRuntimeOptions` / `runSettings`); else parsed from `context` and `configurable`. */
  settings?: LeadRuntimeOptions;
  /** Typed secrets (else the wire `context.secrets` mapping). */
  secrets?: RunSecrets;
}

function isEmpty(o: Readonly<Record<string, unknown>> | undefined): boolean {
  for (const _ in o) return false;
  return true;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

/**
 * The context a run's tools and middlewares receive: the request's wire
 * names as given (DeerFlow's `runtime.context`, for tools written against
 * it), `thread_id` / `run_id` / `user_id` set from the identity, and the
 * typed fields every reader in this package uses — `identity`, `settings`
 * and `secrets`. The wire `secrets` mapping does not survive: its key holds
 * the typed {@link RunSecrets}. Settings the caller passes typed are not
 * parsed again.
 */
export function createRunContext(input: RunContextInput): RunContext {
  const bag = input.context ?? {};
  // Parsed only when there is something to parse: a bare run (no context, no configurable) shares the defaults.
  const settings: RunContextSettings = input.settings ?? (isEmpty(bag) && isEmpty(input.configurable) ? DEFAULT_SETTINGS : readRuntimeOptions(input.configurable, bag));
  const identity: RunIdentity = {
    threadId: input.threadId,
    runId: input.runId,
    userId: input.identity?.userId || nonEmpty(bag.user_id) || input.settings?.userId || "default",
    // an explicit null (the lead agent) counts: only an absent typed name falls back to the wire name
    agentName: input.identity?.agentName !== undefined ? input.identity.agentName : (nonEmpty(input.settings?.agentName) ?? nonEmpty(bag.agent_name) ?? null),
  };
  return {
    ...bag,
    thread_id: identity.threadId,
    run_id: identity.runId,
    user_id: identity.userId,
    identity,
    settings,
    secrets: input.secrets ?? RunSecrets.from(bag.secrets),
  };
}
