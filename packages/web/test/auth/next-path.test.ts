import { describe, expect, it } from "vitest";
import { authPageUrl, resolveNextPath, validateNextPath } from "../../src/auth/next-path";

const ORIGIN = "http://127.0.0.1:2026";

describe("next path after sign-in", () => {
  it("keeps a path of this site with its query and hash", () => {
    expect(validateNextPath("/?thread=abc-1#/memory", ORIGIN)).toBe("/?thread=abc-1#/memory");
    expect(validateNextPath("/workspace/chats/x", ORIGIN)).toBe("/workspace/chats/x");
  });

  it.each([
    ["absolute URL to another site", "https://evil.example/"],
    ["protocol-relative URL", "//evil.example/path"],
    ["backslash read as a slash", "/\\evil.example"],
    ["tab stripped by the URL parser", "/\t/evil.example"],
    ["newline", "/\n/evil.example"],
    ["percent-encoded slash after the first", "/%2F%2Fevil.example"],
    ["percent-encoded backslash after the first", "/%5cevil.example"],
    ["a dot segment the URL parser folds into //", "/.//evil.example"],
    ["a dot-dot segment folded into //", "/a/..//evil.example"],
    ["an encoded dot segment folded into //", "/%2e//evil.example"],
    ["javascript: URL", "javascript:alert(1)"],
    ["data: URL", "data:text/html,<script>alert(1)</script>"],
    ["relative path without a slash", "evil.example"],
    ["the API", "/api/v1/auth/logout"],
    ["the login page (loop)", "/login?next=/"],
    ["the setup page", "/setup"],
    ["empty", ""],
  ])("refuses %s", (_what, raw) => {
    expect(validateNextPath(raw, ORIGIN)).toBeUndefined();
    expect(resolveNextPath(raw, ORIGIN)).toBe("/");
  });

  it("a refused next never reaches the login URL", () => {
    expect(authPageUrl("/login", "//evil.example", ORIGIN)).toBe("/login");
    expect(authPageUrl("/login", "/", ORIGIN)).toBe("/login");
    const url = authPageUrl("/login", "/?thread=t1", ORIGIN);
    expect(url).toBe("/login?next=%2F%3Fthread%3Dt1");
    expect(resolveNextPath(new URL(url, ORIGIN).searchParams.get("next"), ORIGIN)).toBe("/?thread=t1");
  });
});
