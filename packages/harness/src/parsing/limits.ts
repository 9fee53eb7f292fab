import { ValidationError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";

/**
 * A document was refused before (or instead of) parsing it because it is
 * larger or more deeply/widely structured than its limit allows. Stable code
 * `parse_limit_exceeded`; `details` name the file, the limit and the value.
 */
export class ParseLimitError extends ValidationError {
  constructor(message: string, options: DeerFlowErrorOptions & { file: string; limit: string; max: number; actual: number }) {
    const { file, limit, max, actual, ...rest } = options;
    super(message, { ...rest, code: "parse_limit_exceeded", details: { ...rest.details, file, limit, max, actual } });
  }
}

/** Byte length of a string as UTF-8, without allocating a buffer. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
