import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Per-sandbox tokens. A token is HMAC-SHA256(secret, "{sandbox_id}:{nonce}")
 * where the nonce is random per creation and stored with the sandbox (a
 * label or annotation — not secret); the secret never leaves this process.
 * So the provisioner stores no token, an idempotent create hands every caller
 * the same token, a token opens exactly one sandbox, and a sandbox deleted
 * and recreated under the same id refuses the old token.
 */
export class SandboxTokens {
  private readonly secret: Buffer;

  /** @param secret Keeps tokens valid across provisioner restarts; random per process when absent. */
  constructor(secret?: string) {
    this.secret = secret ? createHash("sha256").update(secret).digest() : randomBytes(32);
  }

  /** A fresh creation nonce. */
  static nonce(): string {
    return randomBytes(16).toString("hex");
  }

  /** The token of one sandbox creation. */
  tokenFor(sandboxId: string, nonce: string): string {
    return createHmac("sha256", this.secret).update(`${sandboxId}:${nonce}`).digest("base64url");
  }

  /** Constant-time check of a presented token. */
  verify(sandboxId: string, nonce: string, presented: string | undefined): boolean {
    if (!presented) return false;
    return constantTimeEqual(presented, this.tokenFor(sandboxId, nonce));
  }
}

/** Compare two secrets in time independent of where they differ (and of their lengths: both are hashed first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
