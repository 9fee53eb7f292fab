import type { z } from "zod";
import { ConfigError } from "../errors";
import { formatKeyPath } from "./key-path";

/** One readable validation problem. */
export interface ConfigIssue {
  keyPath: string;
  message: string;
  expected?: string;
  received?: unknown;
}

/** Stands in for a secret's value in an issue: only its length is told. */
class HiddenSecret {
  constructor(readonly length: number) {}
  toJSON(): string {
    return `<secret, ${this.length} characters>`;
  }
}

function describeValue(v: unknown): string {
  if (v instanceof HiddenSecret) return `a string of ${v.length} characters (not shown)`;
  if (v === undefined) return "nothing (missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return `a list (${JSON.stringify(v).slice(0, 60)})`;
  if (typeof v === "object") return "a mapping";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** Keys whose values are secrets: an error about them never repeats the value (it would land in logs). */
const SECRET_KEY = /(^|_)(secret|password|api_key|token)$/i;

function isSecretIssue(issue: z.core.$ZodIssue): boolean {
  const last = issue.path[issue.path.length - 1];
  return typeof last === "string" && SECRET_KEY.test(last) && typeof (issue as { input?: unknown }).input === "string";
}

function issueText(issue: z.core.$ZodIssue): ConfigIssue {
  const keyPath = formatKeyPath(issue.path);
  const raw = (issue as { input?: unknown }).input;
  const input = isSecretIssue(issue) ? new HiddenSecret((raw as string).length) : raw;
  switch (issue.code) {
    case "invalid_type": {
      const expected = String(issue.expected);
      if (input === undefined) return { keyPath, message: `is required (expected ${expected})`, expected };
      return { keyPath, message: `expected ${expected}, received ${describeValue(input)}`, expected, received: input };
    }
    case "invalid_value": {
      const expected = issue.values.map((v) => JSON.stringify(v)).join(" | ");
      return { keyPath, message: `expected one of ${expected}, received ${describeValue(input)}`, expected, received: input };
    }
    case "too_small":
    case "too_big":
      return { keyPath, message: `${issue.message}, received ${describeValue(input)}`, received: input };
    case "unrecognized_keys":
      return { keyPath, message: issue.message };
    default:
      return { keyPath, message: input !== undefined ? `${issue.message} (received ${describeValue(input)})` : issue.message, received: input };
  }
}

/**
 * Validate `data` with `schema`; on failure throw a {@link ConfigError} that
 * names the file, every offending key path, the expected type and the value.
 */
export function validateConfig<T extends z.ZodType>(schema: T, data: unknown, file: string): z.output<T> {
  const result = schema.safeParse(data, { reportInput: true });
  if (result.success) return result.data;
  const issues = result.error.issues.map(issueText);
  // the zod error travels as `cause` (printed with the error): it must not carry a secret's value either
  for (const issue of result.error.issues) if (isSecretIssue(issue)) delete (issue as { input?: unknown }).input;
  const lines = issues.slice(0, 20).map((i) => `  - ${i.keyPath}: ${i.message}`);
  if (issues.length > 20) lines.push(`  … and ${issues.length - 20} more`);
  throw new ConfigError(`Invalid configuration in ${file}:\n${lines.join("\n")}`, {
    code: "config_invalid",
    cause: result.error,
    details: { file, issues },
  });
}
