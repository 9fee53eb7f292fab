import { ValidationError } from "../errors";

/** Allowed shape of thread and user ids (they become directory names). */
export const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The user id used when none is known. */
export const DEFAULT_USER_ID = "default";

/**
 * Validate a thread or user id before it is used in a filesystem path.
 * @throws ValidationError when the id does not match {@link SAFE_ID}.
 */
export function validateId(kind: "thread" | "user", id: unknown): string {
  if (typeof id !== "string" || !SAFE_ID.test(id)) {
    throw new ValidationError(`Invalid ${kind} id ${JSON.stringify(id)}: use 1-64 letters, digits, '_' or '-'`, {
      code: `invalid_${kind}_id`,
      details: { kind },
    });
  }
  return id;
}
