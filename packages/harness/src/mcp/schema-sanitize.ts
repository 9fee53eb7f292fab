import type { JsonSchema } from "../models/types";

/** Keys a model provider must not see at the root of a function's parameters. */
const ROOT_ONLY_DROPPED = ["$schema", "$id", "$comment"];
/** Combinators that OpenAI and Anthropic both reject at the top level of `parameters`. */
const ROOT_COMBINATORS = ["oneOf", "anyOf", "allOf"] as const;
/** How deep `$ref`s are inlined before a recursive definition is cut off. */
const MAX_REF_DEPTH = 8;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

function lookupRef(root: Obj, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObj(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Walk one sub-schema: inline local `$ref`s, give arrays `items`, turn boolean schemas into objects. */
/** A boolean sub-schema where a provider expects an object (`properties` values, `items`). */
function schemaObject(node: unknown): unknown {
  if (node === true) return {};
  if (node === false) return { not: {} };
  return node;
}

function walk(node: unknown, root: Obj, depth: number): unknown {
  if (Array.isArray(node)) return node.map((n) => walk(n, root, depth));
  if (!isObj(node)) return node;
  if (typeof node.$ref === "string") {
    const target = depth < MAX_REF_DEPTH ? lookupRef(root, node.$ref) : undefined;
    const { $ref, ...rest } = node;
    // A recursive or external reference cannot be inlined: fall back to an open schema the model can still fill.
    const base = target === undefined ? { description: `See ${$ref}` } : walk(target, root, depth + 1);
    return { ...(isObj(base) ? base : {}), ...(walk(rest, root, depth) as Obj) };
  }
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$defs" || k === "definitions") continue;
    if (k === "properties" && isObj(v)) {
      const props: Obj = {};
      for (const [pk, pv] of Object.entries(v)) props[pk] = walk(schemaObject(pv), root, depth);
      out[k] = props;
    } else if (k === "items") {
      out[k] = walk(schemaObject(v), root, depth);
    } else if (k === "enum" || k === "const" || k === "default" || k === "examples" || k === "required") {
      out[k] = v;
    } else {
      out[k] = walk(v, root, depth);
    }
  }
  const type = out.type;
  const isArray = type === "array" || (Array.isArray(type) && type.includes("array"));
  // OpenAI rejects an array schema without `items` ("array schema missing items").
  if (isArray && out.items === undefined && out.prefixItems === undefined) out.items = {};
  return out;
}

/** Merge the object variants of a top-level combinator into one object schema (all optional except shared `required` of `allOf`). */
function flattenRootCombinator(schema: Obj, key: (typeof ROOT_COMBINATORS)[number]): void {
  const variants = schema[key];
  delete schema[key];
  if (!Array.isArray(variants)) return;
  const props = isObj(schema.properties) ? { ...schema.properties } : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const alternatives: string[] = [];
  for (const v of variants) {
    if (!isObj(v)) continue;
    if (isObj(v.properties)) for (const [pk, pv] of Object.entries(v.properties)) if (!(pk in props)) props[pk] = pv;
    if (key === "allOf" && Array.isArray(v.required)) for (const r of v.required) required.add(String(r));
    if (key !== "allOf" && Array.isArray(v.required) && v.required.length) alternatives.push((v.required as string[]).join(" + "));
  }
  schema.properties = props;
  if (required.size) schema.required = [...required];
  if (alternatives.length) {
    // The choice between variants survives as prose, since the structure cannot be expressed at the root.
    const note = `Provide one of: ${alternatives.join(" | ")}.`;
    schema.description = typeof schema.description === "string" && schema.description ? `${schema.description} ${note}` : note;
  }
}

/**
 * Make an MCP tool's `inputSchema` acceptable to every provider we bind tools
 * for, changing as little as possible: local `$ref`s are inlined (and the
 * definitions dropped), `$schema`/`$id` removed, the root forced to
 * `type: "object"` with `properties`, top-level `oneOf`/`anyOf`/`allOf`
 * merged into the root object (OpenAI and Anthropic reject them there),
 * arrays given `items`, boolean sub-schemas turned into objects, and
 * `required` names that are not properties dropped. Everything else
 * (descriptions, enums, formats, bounds, nested combinators) passes through.
 */
export function sanitizeToolSchema(input: unknown): JsonSchema {
  const root: Obj = isObj(input) ? input : {};
  const schema = walk(root, root, 0) as Obj;
  for (const k of ROOT_ONLY_DROPPED) delete schema[k];
  for (const k of ROOT_COMBINATORS) if (k in schema) flattenRootCombinator(schema, k);
  delete schema.not;
  delete schema.enum;
  schema.type = "object";
  if (!isObj(schema.properties)) schema.properties = {};
  if (Array.isArray(schema.required)) {
    const props = schema.properties as Obj;
    const req = (schema.required as unknown[]).filter((r): r is string => typeof r === "string" && r in props);
    if (req.length) schema.required = [...new Set(req)];
    else delete schema.required;
  } else delete schema.required;
  return schema;
}
