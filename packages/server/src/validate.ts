import { DEFAULT_MAX_JSON_DEPTH, jsonDepth } from "@deerflow-ts/harness";
import type { Context } from "hono";
import type { z } from "zod";
import { HttpError, validationError } from "./http-error";
import { assertJsonContentType } from "./security/content-type";
import type { ValidationIssue } from "./http-error";

/** Thread/run id format of the contract. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Validate a thread id path/body value (422 on violation). */
export function checkThreadId(id: string, loc: Array<string | number> = ["path", "thread_id"]): string {
  if (!ID_PATTERN.test(id)) {
    throw validationError([{ type: "string_pattern_mismatch", loc, msg: "String should match pattern '^[A-Za-z0-9_-]{1,64}$'", input: id }]);
  }
  return id;
}

/** Validate a run id path value (422 on violation). */
export function checkRunId(id: string): string {
  return checkThreadId(id, ["path", "run_id"]);
}

/** Turn zod issues into pydantic-like 422 items. */
export function zodIssues(error: z.ZodError, root = "body"): ValidationIssue[] {
  return error.issues.map((i) => {
    const code = i.code === "unrecognized_keys" ? "extra_forbidden" : i.code;
    const keys = i.code === "unrecognized_keys" ? (i as { keys?: string[] }).keys ?? [] : [];
    if (keys.length) {
      return { type: code, loc: [root, ...(i.path as Array<string | number>), keys.join(",")], msg: `Extra inputs are not permitted: ${keys.join(", ")}` };
    }
    return { type: code, loc: [root, ...(i.path as Array<string | number>)], msg: i.message };
  });
}

const UTF8 = new TextDecoder();

function bodyTooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `Request body too large (limit ${maxBytes} bytes)`);
}

/**
 * The request body's bytes, refused with 413 as soon as more than
 * `maxBytes` have arrived. A body of unannounced length (chunked) is read
 * piece by piece: reading it whole first would let any client, signed in
 * or not, make the gateway hold as much as it cares to send.
 */
export async function readBodyLimited(c: Context, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      throw bodyTooLarge(maxBytes);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/**
 * Read and validate a JSON body. Empty body → `{}`. Malformed JSON → 422;
 * a body larger than `maxBytes` → 413; one nested deeper than `maxDepth`
 * (default {@link DEFAULT_MAX_JSON_DEPTH}) → 422 before it is parsed, since
 * validation and every later walk over the value recurse once per level.
 */
export async function readJson<T extends z.ZodType>(c: Context, schema: T, maxBytes: number, maxDepth = DEFAULT_MAX_JSON_DEPTH): Promise<z.infer<T>> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  // 415 unless declared JSON: a foreign page sends text/plain, form or untyped bodies without a CORS preflight
  const contentType = c.req.header("content-type");
  assertJsonContentType(contentType, declared > 0);
  if (Number.isFinite(declared) && declared > maxBytes) throw bodyTooLarge(maxBytes);
  let text: string;
  try {
    if (Number.isFinite(declared)) {
      // The HTTP parser holds a body to its declared length, checked above: decode it straight from the bytes read.
      text = await c.req.text();
      // (a Request built in-process can declare less than it carries; every UTF-16 unit is at least one byte)
      if (text.length > maxBytes) throw bodyTooLarge(maxBytes);
    } else {
      text = UTF8.decode(await readBodyLimited(c, maxBytes));
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, "Could not read the request body");
  }
  let raw: unknown = {};
  if (text.trim()) {
    assertJsonContentType(contentType, true);
    const depth = jsonDepth(text, maxDepth);
    if (depth > maxDepth) {
      throw validationError([{ type: "json_too_deep", loc: ["body"], msg: `JSON nesting is deeper than the limit of ${maxDepth} levels` }]);
    }
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw validationError([{ type: "json_invalid", loc: ["body"], msg: `JSON decode error: ${(err as Error).message}` }]);
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return parsed.data;
}

/** Parse an integer query parameter with bounds (422 on violation). */
export function queryInt(c: Context, name: string, def: number, min: number, max: number): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw validationError([{ type: "int_parsing", loc: ["query", name], msg: `Input should be an integer between ${min} and ${max}`, input: raw }]);
  }
  return n;
}
