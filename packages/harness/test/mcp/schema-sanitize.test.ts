import { describe, expect, it } from "vitest";
import { sanitizeToolSchema } from "../../src/mcp";

describe("sanitizeToolSchema", () => {
  it("passes an ordinary schema through unchanged", () => {
    const s = { type: "object", properties: { q: { type: "string", description: "query", minLength: 1, format: "uri" }, n: { type: "integer", enum: [1, 2] } }, required: ["q"] };
    expect(sanitizeToolSchema(s)).toEqual(s);
  });

  it("inlines local $refs, drops $schema/$defs, keeps nested combinators and formats", () => {
    const out = sanitizeToolSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      $defs: { unit: { type: "string", enum: ["c", "f"] } },
      properties: { unit: { $ref: "#/$defs/unit", description: "unit" }, when: { oneOf: [{ type: "string" }, { type: "integer" }] }, host: { type: "string", format: "hostname" } },
      required: ["unit", "ghost"],
      additionalProperties: false,
    });
    expect(out).toEqual({
      type: "object",
      properties: { unit: { type: "string", enum: ["c", "f"], description: "unit" }, when: { oneOf: [{ type: "string" }, { type: "integer" }] }, host: { type: "string", format: "hostname" } },
      required: ["unit"],
      additionalProperties: false,
    });
  });

  it("forces an object root with properties; gives arrays items; turns boolean schemas into objects", () => {
    expect(sanitizeToolSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(sanitizeToolSchema({})).toEqual({ type: "object", properties: {} });
    expect(sanitizeToolSchema({ type: "object", properties: { tags: { type: "array" }, any: true } })).toEqual({
      type: "object",
      properties: { tags: { type: "array", items: {} }, any: {} },
    });
  });

  it("merges top-level anyOf/oneOf/allOf into the root object (rejected there by OpenAI and Anthropic)", () => {
    const out = sanitizeToolSchema({
      anyOf: [
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      ],
    });
    expect(out.type).toBe("object");
    expect(out).not.toHaveProperty("anyOf");
    expect(Object.keys(out.properties as object)).toEqual(["id", "name"]);
    expect(out.required).toBeUndefined();
    expect(out.description).toBe("Provide one of: id | name.");
    const all = sanitizeToolSchema({ allOf: [{ properties: { a: { type: "number" } }, required: ["a"] }, { properties: { b: { type: "number" } } }] });
    expect(all).toEqual({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a"] });
  });

  it("survives recursive definitions", () => {
    const out = sanitizeToolSchema({ type: "object", $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } }, properties: { root: { $ref: "#/$defs/node" } } });
    expect(JSON.stringify(out)).not.toContain("$ref");
    expect(JSON.stringify(out).length).toBeLessThan(5000);
  });
});
