import { describe, expect, it } from "vitest";
import type { Session } from "../../src/auth/session";
import { visiblePages } from "../../src/pages";

const user = (role: "admin" | "user", authEnabled = true): Session => ({
  user: { id: "u1", email: "u@example.com", system_role: role, needs_setup: false, oauth_provider: null },
  authEnabled,
});
const labels = (s: Session | undefined) => visiblePages(s).map((p) => p.label);

describe("which pages the top bar offers", () => {
  it("a user sees no admin page (MCP, Skills, Users)", () => {
    expect(labels(user("user"))).toEqual(["Memory", "Account"]);
  });

  it("an admin sees the admin pages and Users", () => {
    expect(labels(user("admin"))).toEqual(["Skills", "MCP", "Memory", "Users", "Account"]);
  });

  it("auth-disabled mode is the app as before: no Users, no Account", () => {
    expect(labels(user("admin", false))).toEqual(["Skills", "MCP", "Memory"]);
  });
});
