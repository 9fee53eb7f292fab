import { createHash } from "node:crypto";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startOidcProvider } from "@deerflow-ts/server/testing";
import type { OidcProvider } from "@deerflow-ts/server/testing";

const REDIRECT = "http://127.0.0.1:1/cb";
const clock = { now: Date.now() };
let idp: OidcProvider;

beforeAll(async () => {
  idp = await startOidcProvider({
    clients: [{ clientId: "app", clientSecret: "s3cr:et", redirectUris: [REDIRECT] }],
    users: { ann: { sub: "u-1", email: "ann@example.com", name: "Ann" } },
    now: () => clock.now,
  });
});
beforeEach(() => {
  idp.setFaults([]);
  clock.now = Date.now();
});
afterAll(async () => {
  await idp.close();
});

const verifier = "v".repeat(43);
const challenge = createHash("sha256").update(verifier).digest("base64url");

async function code(extra: Record<string, string> = {}): Promise<URL> {
  const q = new URLSearchParams({ response_type: "code", client_id: "app", redirect_uri: REDIRECT, scope: "openid email", state: "st", nonce: "n-1", code_challenge: challenge, code_challenge_method: "S256", ...extra });
  const res = await fetch(`${idp.authorizationEndpoint}?${q}`, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}

function redeem(c: string, opts: { verifier?: string; basic?: boolean; secret?: string; redirect?: string } = {}) {
  const form = new URLSearchParams({ grant_type: "authorization_code", code: c, redirect_uri: opts.redirect ?? REDIRECT, code_verifier: opts.verifier ?? verifier });
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const secret = opts.secret ?? "s3cr:et";
  if (opts.basic) headers.authorization = `Basic ${Buffer.from(`app:${encodeURIComponent(secret)}`).toString("base64")}`;
  else {
    form.set("client_id", "app");
    form.set("client_secret", secret);
  }
  return fetch(idp.tokenEndpoint, { method: "POST", headers, body: form });
}

describe("OIDC provider double", () => {
  it("publishes discovery metadata and signs ID tokens its JWKS verifies", async () => {
    const meta = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ issuer: idp.issuer, token_endpoint: idp.tokenEndpoint, jwks_uri: idp.jwksUri, code_challenge_methods_supported: ["S256"] });
    const back = await code();
    expect(back.searchParams.get("state")).toBe("st");
    const res = await redeem(back.searchParams.get("code")!, { basic: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { id_token: string; access_token: string };
    const { payload } = await jwtVerify(body.id_token, createRemoteJWKSet(new URL(idp.jwksUri)), { issuer: idp.issuer, audience: "app" });
    expect(payload).toMatchObject({ sub: "u-1", email: "ann@example.com", email_verified: true, nonce: "n-1", name: "Ann" });
    const info = await fetch(idp.userinfoEndpoint, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(await info.json()).toEqual({ sub: "u-1", email: "ann@example.com", email_verified: true, name: "Ann" });
    expect((await fetch(idp.userinfoEndpoint, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
  });

  it("verifies PKCE, the redirect URI and the client secret, and honours each code once before it expires", async () => {
    expect(await (await redeem((await code()).searchParams.get("code")!, { verifier: "w".repeat(43) })).json()).toMatchObject({ error: "invalid_grant" });
    expect((await redeem((await code()).searchParams.get("code")!, { secret: "wrong" })).status).toBe(401);
    expect(await (await redeem((await code()).searchParams.get("code")!, { redirect: "http://127.0.0.1:1/other" })).json()).toMatchObject({ error: "invalid_grant" });
    const once = (await code()).searchParams.get("code")!;
    expect((await redeem(once)).status).toBe(200);
    expect(await (await redeem(once)).json()).toMatchObject({ error: "invalid_grant" });
    const late = (await code()).searchParams.get("code")!;
    clock.now += 61_000;
    expect(await (await redeem(late)).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses plain PKCE and unknown redirect URIs (the latter without redirecting)", async () => {
    const plain = await code({ code_challenge_method: "plain" });
    expect(plain.searchParams.get("error")).toBe("invalid_request");
    const res = await fetch(`${idp.authorizationEndpoint}?${new URLSearchParams({ response_type: "code", client_id: "app", redirect_uri: "http://127.0.0.1:1/evil", scope: "openid" })}`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });

  it("misbehaves on request: bad_signature fails the JWKS check, expired_token is past exp", async () => {
    idp.setFaults(["bad_signature"]);
    const bad = (await (await redeem((await code()).searchParams.get("code")!)).json()) as { id_token: string };
    await expect(jwtVerify(bad.id_token, createRemoteJWKSet(new URL(idp.jwksUri)))).rejects.toThrow(/signature/);
    idp.setFaults(["expired_token"]);
    const expired = (await (await redeem((await code()).searchParams.get("code")!)).json()) as { id_token: string };
    const claims = JSON.parse(Buffer.from(expired.id_token.split(".")[1], "base64url").toString()) as { exp: number };
    expect(claims.exp).toBeLessThan(Math.floor(clock.now / 1000) - 3000);
  });
});
