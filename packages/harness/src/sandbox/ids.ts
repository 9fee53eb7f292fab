import { ValidationError } from "../errors";

/** Allowed shape of thread and user ids (they become directory names). */
export const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The user id used when none is known. */
export const DEFAULT_USER_ID = "default";

/** The run's user: `context.user_id` when it is a non-empty string, else {@link DEFAULT_USER_ID}. */
export function contextUserId(context: { user_id?: unknown }): string {
  return typeof context.user_id === "string" && context.user_id ? context.user_id : DEFAULT_USER_ID;
}

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
