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
