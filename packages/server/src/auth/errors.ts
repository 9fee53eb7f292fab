import { DeerFlowError } from "@deerflow-ts/harness";

/** Stable codes of {@link AuthError}. */
export type AuthErrorCode =
  | "auth.email_exists"
  | "auth.last_admin"
  | "auth.already_initialized"
  | "auth.user_not_found"
  | "auth.weak_password"
  | "auth.invalid_email"
  | "auth.jwt_secret_missing"
  | "auth.token_not_found";

/**
 * An account operation refused for a reason the caller can act on (the CLI
 * prints the message; the routes map the code to DeerFlow's HTTP answer).
 */
export class AuthError extends DeerFlowError {
  declare readonly code: AuthErrorCode;

  constructor(code: AuthErrorCode, message: string) {
    super(code, message);
  }
}

/** Whether `err` is an {@link AuthError} with `code`. */
export function isAuthError(err: unknown, code?: AuthErrorCode): err is AuthError {
  return err instanceof AuthError && (code === undefined || err.code === code);
}
