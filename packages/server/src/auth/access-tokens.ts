import { createHash, randomBytes, randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { AccessTokenStore } from "./account-store";
import { AuthError } from "./errors";
import type { SystemRole, TokenScope } from "./request-user";

/** Prefix of every personal access token (tells it apart from a session JWT and makes leaked ones easy to scan for). */
export const TOKEN_PREFIX = "dfp_";

/** The scopes a token can hold. */
export const TOKEN_SCOPES: readonly TokenScope[] = ["read", "run", "admin"];

/** A personal access token as listed (never the secret). */
export interface AccessTokenInfo {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly scopes: readonly TokenScope[];
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
}

/** What a presented token resolves to: the token and its owner's current account row. */
export interface TokenOwner {
  readonly token: AccessTokenInfo;
  readonly user: { id: string; email: string; systemRole: SystemRole; needsSetup: boolean; oauthProvider: string | null };
}

type Row = Record<string, unknown>;

/** How often `last_used_at` is rewritten: a write per request would serialise every process on the database. */
export const TOUCH_EVERY_MS = 60_000;

/** The stored form of a token secret (both account stores). */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A token row (SQLite or PostgreSQL, same columns) as listed. */
export function toInfo(r: Row): AccessTokenInfo {
  return {
    id: r.id as string,
    userId: r.user_id as string,
    name: r.name as string,
    scopes: (r.scopes as string).split(",").filter(Boolean) as TokenScope[],
    createdAt: r.created_at as string,
    lastUsedAt: (r.last_used_at as string | null) ?? null,
  };
}

/**
 * Personal access tokens (`Authorization: Bearer dfp_…`). Only the SHA-256
 * of a secret is stored: the secret has 256 random bits, so a plain hash
 * cannot be reversed and a lookup is one indexed read.
 */
export class AccessTokens implements AccessTokenStore {
  private readonly byHash: Database.Statement;
  private readonly touch: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.byHash = db.prepare(
      "SELECT t.id, t.user_id, t.name, t.scopes, t.created_at, t.last_used_at, u.email, u.system_role, u.needs_setup, u.oauth_provider FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?",
    );
    this.touch = db.prepare("UPDATE access_tokens SET last_used_at = ? WHERE id = ?");
  }

  /** Mint a token; the returned `secret` exists only in this answer. */
  create(userId: string, name: string, scopes: readonly TokenScope[], now = new Date()): AccessTokenInfo & { secret: string } {
    const secret = TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const id = randomUUID();
    const unique = [...new Set(scopes)].sort((a, b) => TOKEN_SCOPES.indexOf(a) - TOKEN_SCOPES.indexOf(b));
    try {
      this.db
        .prepare("INSERT INTO access_tokens (id, user_id, name, scopes, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .run(id, userId, name, unique.join(","), hashSecret(secret), now.toISOString());
    } catch (err) {
      if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw new AuthError("auth.user_not_found", `No user with id '${userId}'.`);
      throw err;
    }
    return { ...this.get(userId, id)!, secret };
  }

  /** The user's tokens, newest first. */
  list(userId: string): AccessTokenInfo[] {
    return (this.db.prepare("SELECT * FROM access_tokens WHERE user_id = ? ORDER BY created_at DESC, id").all(userId) as Row[]).map(toInfo);
  }

  /** One of the user's tokens. */
  get(userId: string, id: string): AccessTokenInfo | undefined {
    const r = this.db.prepare("SELECT * FROM access_tokens WHERE user_id = ? AND id = ?").get(userId, id) as Row | undefined;
    return r ? toInfo(r) : undefined;
  }

  /** Revoke one of the user's tokens; false when the user has no such token. */
  revoke(userId: string, id: string): boolean {
    return this.db.prepare("DELETE FROM access_tokens WHERE user_id = ? AND id = ?").run(userId, id).changes > 0;
  }

  /**
   * The token and owner a presented secret belongs to (one indexed read), or
   * `undefined` for an unknown, revoked or malformed secret, or one whose
   * account was deleted.
   */
  resolve(secret: string, now = Date.now()): TokenOwner | undefined {
    if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
    const r = this.byHash.get(hashSecret(secret)) as Row | undefined;
    if (!r) return undefined;
    const token = toInfo(r);
    if (!token.lastUsedAt || now - Date.parse(token.lastUsedAt) >= TOUCH_EVERY_MS) {
      const at = new Date(now).toISOString();
      try {
        this.touch.run(at, token.id);
      } catch {
        // a busy database must not fail the request: the next use records it
      }
    }
    return {
      token,
      user: {
        id: token.userId,
        email: r.email as string,
        systemRole: r.system_role as SystemRole,
        needsSetup: r.needs_setup === 1,
        oauthProvider: (r.oauth_provider as string | null) ?? null,
      },
    };
  }
}
