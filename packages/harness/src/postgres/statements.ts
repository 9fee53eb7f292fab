import type pg from "pg";

let counter = 0;
const names = new Map<string, string>();

/**
 * A named query for `text`: node-postgres prepares a named statement once per
 * connection and afterwards only binds and executes it, so a repeated write
 * costs one round trip without the server parsing and planning it again.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (!name) {
    name = `deerflow_${++counter}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** An `int8` column value (node-postgres returns them as strings) as a number. */
export function int8(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

const NUL = /\u0000/g;

/**
 * Free text for a TEXT column: PostgreSQL refuses the NUL character in text
 * (SQLite and memory keep it), so it becomes U+FFFD instead of failing the
 * write. Lone surrogates are already written as U+FFFD by the UTF-8 encoder.
 */
export function pgText<T extends string | null | undefined>(value: T): T {
  return (typeof value === "string" && value.includes("\u0000") ? value.replace(NUL, "\uFFFD") : value) as T;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function wellFormedString(value: string): string {
  return pgText(value).replace(LONE_SURROGATE, "\uFFFD");
}

function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return wellFormedString(value);
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[wellFormedString(k)] = wellFormed(v);
    return out;
  }
  return value;
}

/**
 * JSON text for a JSONB parameter. jsonb refuses `\u0000` and unpaired
 * surrogate escapes, which JSON.stringify writes for NUL and lone
 * surrogates: such characters become U+FFFD (checked on the text, so the
 * common case costs one scan).
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  return /\\u0000|\\ud[89a-f]/i.test(text) ? JSON.stringify(wellFormed(value)) : text;
}
