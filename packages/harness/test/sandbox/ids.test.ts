import { describe, expect, it } from "vitest";
import { contextUserId, DEFAULT_USER_ID, validateId } from "../../src/sandbox";

describe("sandbox ids", () => {
  it("contextUserId takes a non-empty string user_id, else the default user", () => {
    expect(contextUserId({ user_id: "alice" })).toBe("alice");
    for (const user_id of [undefined, "", 42, null]) expect(contextUserId({ user_id })).toBe(DEFAULT_USER_ID);
  });

  it("validateId accepts safe ids and rejects path material", () => {
    expect(validateId("thread", "t_1-A")).toBe("t_1-A");
    for (const bad of ["", "../x", "a/b", "a".repeat(65), 7]) expect(() => validateId("user", bad)).toThrow(/Invalid user id/);
  });
});
