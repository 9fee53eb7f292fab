import { z } from "zod";

const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["true", "yes", "on", "1"]);
const FALSE_WORDS = new Set(["false", "no", "off", "0"]);

/**
 * Numbers accept numeric strings too (a `$VAR` always resolves to a string,
 * and DeerFlow's pydantic models coerce them the same way).
 */
export function num() {
  return z.preprocess((v) => (typeof v === "string" && NUMERIC.test(v.trim()) ? Number(v) : v), z.number());
}

/** Integers, with the same string coercion as {@link num}. */
export function int() {
  return z.preprocess((v) => (typeof v === "string" && NUMERIC.test(v.trim()) ? Number(v) : v), z.int());
}

/** Booleans accept `true/false/yes/no/on/off/1/0` strings (pydantic's lax rules). */
export function bool() {
  return z.preprocess((v) => {
    if (typeof v === "string") {
      const s = v.trim().toLowerCase();
      if (TRUE_WORDS.has(s)) return true;
      if (FALSE_WORDS.has(s)) return false;
    }
    if (v === 1) return true;
    if (v === 0) return false;
    return v;
  }, z.boolean());
}

/** A free-form mapping (kept as-is). */
export function record() {
  return z.record(z.string(), z.unknown());
}

const nullToUndefined = (v: unknown) => (v === null ? undefined : v);

/**
 * A config section: an object that keeps unknown keys (extensions read them),
 * takes its defaults when absent **or null** (`memory:` with nothing under it).
 */
export function section<T extends z.ZodRawShape>(shape: T) {
  const obj = z.looseObject(shape);
  return z.preprocess(nullToUndefined, obj.prefault({} as z.input<typeof obj>));
}

/** An optional section without defaults: absent or null stays null. */
export function optionalSection<T extends z.ZodRawShape>(shape: T) {
  return z.looseObject(shape).nullish().transform((v) => v ?? null);
}

/** A list that defaults to `[]` when absent or null. */
export function list<T extends z.ZodType>(item: T) {
  return z.preprocess(nullToUndefined, z.array(item).default([]));
}

/** A mapping name → item that defaults to `{}` when absent or null. */
export function mapOf<T extends z.ZodType>(item: T) {
  return z.preprocess(nullToUndefined, z.record(z.string(), item).default({}));
}

/** A value that may be null; absent becomes null. */
export function nullable<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? null);
}
