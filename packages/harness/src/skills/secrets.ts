import { RunSecrets } from "../runtime/run-context";
import type { SecretRequirement } from "./types";

/** Secrets bound for one active skill: env to inject and values to redact. */
export interface BoundSecrets {
  env: Record<string, string>;
  /** Declared, non-optional names the request did not supply. */
  missing: string[];
}

/**
 * Bind the request-scoped secrets a skill declares: only names the skill
 * lists in `required-secrets` are taken from the run's secrets (a run
 * context's typed `secrets`, or a request's `secrets` mapping); everything
 * else the request carries stays unbound.
 */
export function bindSkillSecrets(required: readonly SecretRequirement[], supplied: RunSecrets | Readonly<Record<string, unknown>> | undefined): BoundSecrets {
  const env: Record<string, string> = {};
  const missing: string[] = [];
  const source = RunSecrets.from(supplied);
  for (const req of required) {
    const v = source.get(req.name);
    if (v !== undefined) env[req.name] = v;
    else if (!req.optional) missing.push(req.name);
  }
  return { env, missing };
}

/** Replace every occurrence of a bound secret value in `text` with `[REDACTED:<NAME>]` (longest values first). */
export function redactSecrets(text: string, env: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(env)
    .filter(([, v]) => v.length >= 4)
    .sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [name, value] of pairs) out = out.split(value).join(`[REDACTED:${name}]`);
  return out;
}

/** POSIX-shell single-quote a value. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
