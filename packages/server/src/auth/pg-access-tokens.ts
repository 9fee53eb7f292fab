import { randomBytes, randomUUID } from "node:crypto";
import type { Pool } from "pg";
import type { AccessTokenStore } from "./account-store";
import { hashSecret, TOKEN_PREFIX, TOKEN_SCOPES, toInfo, TOUCH_EVERY_MS } from "./access-tokens";
import type { AccessTokenInfo, TokenOwner } from "./access-tokens";
import { AuthError } from "./errors";
import { sqlState } from "./pg-auth-schema";
import type { SystemRole, TokenScope } from "./request-user";

/**
 * Personal access tokens in PostgreSQL (`auth_access_tokens`): the SQLite
 * {@link AccessTokens}' behaviour — only the SHA-256 of a secret stored, one
 * indexed read per presented token, `last_used_at` rewritten at most once a
 * minute — on the shared database.
 */
export class PgAccessTokens implements AccessTokenStore {
  constructor(private readonly db: () => Promise<Pool>) {}

  async create(userId: string, name: string, scopes: readonly TokenScope[], now = new Date()): Promise<AccessTokenInfo & { secret: string }> {
    const secret = TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const id = randomUUID();
    const unique = [...new Set(scopes)].sort((a, b) => TOKEN_SCOPES.indexOf(a) - TOKEN_SCOPES.indexOf(b));
    try {
      const r = await (await this.db()).query(
        "INSERT INTO auth_access_tokens (id, user_id, name, scopes, token_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
        [id, userId, name, unique.join(","), hashSecret(secret), now.toISOString()],
      );
      return { ...toInfo(r.rows[0]), secret };
    } catch (err) {
      if (sqlState(err) === "23503") throw new AuthError("auth.user_not_found", `No user with id '${userId}'.`);
      throw err;
    }
  }

  async list(userId: string): Promise<AccessTokenInfo[]> {
    const r = await (await this.db()).query("SELECT * FROM auth_access_tokens WHERE user_id = $1 ORDER BY created_at DESC, id", [userId]);
    return r.rows.map(toInfo);
  }

  async get(userId: string, id: string): Promise<AccessTokenInfo | undefined> {
    const r = await (await this.db()).query("SELECT * FROM auth_access_tokens WHERE user_id = $1 AND id = $2", [userId, id]);
    return r.rows[0] ? toInfo(r.rows[0]) : undefined;
  }

  async revoke(userId: string, id: string): Promise<boolean> {
    const r = await (await this.db()).query("DELETE FROM auth_access_tokens WHERE user_id = $1 AND id = $2", [userId, id]);
    return (r.rowCount ?? 0) > 0;
  }

  async resolve(secret: string, now = Date.now()): Promise<TokenOwner | undefined> {
    if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return undefined;
    const pool = await this.db();
    const r = await pool.query(
      "SELECT t.id, t.user_id, t.name, t.scopes, t.created_at, t.last_used_at, u.email, u.system_role, u.needs_setup, u.oauth_provider FROM auth_access_tokens t JOIN auth_users u ON u.id = t.user_id WHERE t.token_hash = $1",
      [hashSecret(secret)],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const token = toInfo(row);
    if (!token.lastUsedAt || now - Date.parse(token.lastUsedAt) >= TOUCH_EVERY_MS) {
      // a failed touch must not fail the request: the next use records it
      await pool.query("UPDATE auth_access_tokens SET last_used_at = $1 WHERE id = $2", [new Date(now).toISOString(), token.id]).catch(() => undefined);
    }
    return {
      token,
      user: { id: token.userId, email: row.email as string, systemRole: row.system_role as SystemRole, needsSetup: row.needs_setup === true, oauthProvider: (row.oauth_provider as string | null) ?? null },
    };
  }
}
