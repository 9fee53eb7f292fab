/**
 * The keys a config schema knows, read from the zod schemas themselves so the
 * unknown-key check never drifts from what is validated. A mapping's
 * {@link KeyPolicy} says what an unlisted key means there.
 */
import type { z } from "zod";

/**
 * What an unlisted key in a mapping means:
 * - `closed`: a mistake (the reader ignores it) — always reported;
 * - `typos`: the mapping carries free extras (a tool's or a provider's own
 *   keys), so only a near miss of a known key is reported (`max_resluts`);
 * - `open`: anything goes (provider kwargs of a model entry) — never reported.
 */
export type KeyPolicy = "closed" | "typos" | "open";

/** The key structure of a schema, as far as the unknown-key check needs it. */
export type KeyShape =
  | { kind: "object"; keys: Map<string, KeyShape>; policy: KeyPolicy }
  | { kind: "map"; value: KeyShape }
  | { kind: "list"; item: KeyShape }
  | { kind: "union"; options: KeyShape[] }
  | { kind: "leaf" };

/** How one schema is to be read: its policy, and other schemas whose keys it also accepts. */
export interface KeyMark {
  policy?: KeyPolicy;
  /** Schemas read from the same mapping by other subsystems (their keys are known here too). */
  alsoFrom?: readonly z.ZodType[];
  /** Extra accepted names that no schema lists (keys DeerFlow has that are read elsewhere or ignored). */
  extraKeys?: readonly string[];
}

const marks = new WeakMap<object, KeyMark>();
const cache = new WeakMap<object, KeyShape>();
const LEAF: KeyShape = { kind: "leaf" };

/** Attach a {@link KeyMark} to a schema (merged with an earlier one). Returns the schema. */
export function markKeys<T extends z.ZodType>(schema: T, mark: KeyMark): T {
  const prev = marks.get(schema) ?? {};
  marks.set(schema, {
    policy: mark.policy ?? prev.policy,
    alsoFrom: [...(prev.alsoFrom ?? []), ...(mark.alsoFrom ?? [])],
    extraKeys: [...(prev.extraKeys ?? []), ...(mark.extraKeys ?? [])],
  });
  return schema;
}

interface Def {
  type: string;
  in?: z.ZodType;
  out?: z.ZodType;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function mergeMark(a: KeyMark | undefined, b: KeyMark | undefined): KeyMark | undefined {
  if (!a) return b;
  if (!b) return a;
  return { policy: b.policy ?? a.policy, alsoFrom: [...(a.alsoFrom ?? []), ...(b.alsoFrom ?? [])], extraKeys: [...(a.extraKeys ?? []), ...(b.extraKeys ?? [])] };
}

function build(schema: z.ZodType, inherited: KeyMark | undefined, depth: number): KeyShape {
  if (depth > 40) return LEAF;
  const mark = mergeMark(inherited, marks.get(schema));
  const def = defOf(schema);
  switch (def.type) {
    case "pipe": {
      // preprocess = pipe(transform, schema); `.transform()` = pipe(schema, transform): the keys live on the non-transform side
      const side = def.in && defOf(def.in).type === "transform" ? def.out : def.in;
      return side ? build(side, mark, depth + 1) : LEAF;
    }
    case "default":
    case "prefault":
    case "optional":
    case "nullable":
    case "readonly":
    case "catch":
    case "nonoptional":
      return def.innerType ? build(def.innerType, mark, depth + 1) : LEAF;
    case "object": {
      const keys = new Map<string, KeyShape>();
      for (const [k, v] of Object.entries(def.shape ?? {})) keys.set(k, shapeOf(v, depth + 1));
      for (const other of mark?.alsoFrom ?? []) {
        const o = shapeOf(other, depth + 1);
        if (o.kind !== "object") continue;
        for (const [k, v] of o.keys) if (!keys.has(k) || keys.get(k)!.kind === "leaf") keys.set(k, v);
      }
      for (const k of mark?.extraKeys ?? []) if (!keys.has(k)) keys.set(k, LEAF);
      return { kind: "object", keys, policy: mark?.policy ?? "closed" };
    }
    case "record":
      return { kind: "map", value: def.valueType ? shapeOf(def.valueType, depth + 1) : LEAF };
    case "array":
      return { kind: "list", item: def.element ? shapeOf(def.element, depth + 1) : LEAF };
    case "union": {
      const options = (def.options ?? []).map((o) => shapeOf(o, depth + 1)).filter((o) => o.kind !== "leaf");
      if (!options.length) return LEAF;
      return options.length === 1 ? options[0] : { kind: "union", options };
    }
    default:
      return LEAF;
  }
}

/** The {@link KeyShape} of a schema (cached per schema object). */
export function shapeOf(schema: z.ZodType, depth = 0): KeyShape {
  const hit = cache.get(schema);
  if (hit) return hit;
  const shape = build(schema, undefined, depth);
  cache.set(schema, shape);
  return shape;
}
