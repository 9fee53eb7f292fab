import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool, toToolSpec, zodToJsonSchema } from "../../src/tools";

describe("tool()", () => {
  it("derives the JSON schema the model sees from zod", () => {
    const t = tool({
      name: "read_file",
      description: "Read a file",
      schema: z.object({ description: z.string().describe("why"), path: z.string(), start_line: z.number().int().optional() }),
      execute: () => "x",
    });
    const spec = toToolSpec(t);
    expect(spec.parameters).toMatchObject({
      type: "object",
      properties: { description: { type: "string", description: "why" }, path: { type: "string" }, start_line: { type: "integer" } },
      required: ["description", "path"],
    });
    expect(spec.parameters.$schema).toBeUndefined();
  });

  it("derives a schema once: tools built on one zod schema carry the same JSON schema zodToJsonSchema gives", () => {
    const schema = z.object({ path: z.string().describe("where"), limit: z.number().int().nullish() });
    const a = tool({ name: "a", description: "d", schema, execute: () => "" });
    const b = tool({ name: "b", description: "d", schema, execute: () => "" });
    expect(b.parameters).toBe(a.parameters);
    expect(a.parameters).toEqual(zodToJsonSchema(schema));
    const other = tool({ name: "c", description: "d", schema: z.object({ q: z.string() }), execute: () => "" });
    expect(other.parameters).not.toBe(a.parameters);
    expect(other.parameters).toMatchObject({ properties: { q: { type: "string" } }, required: ["q"] });
  });

  it("rejects bad names, missing descriptions and non-object schemas", () => {
    expect(() => tool({ name: "bad name", description: "d", schema: z.object({}), execute: () => "" })).toThrow(/Invalid tool name/);
    expect(() => tool({ name: "ok", description: " ", schema: z.object({}), execute: () => "" })).toThrow(/description/);
    expect(() => tool({ name: "ok", description: "d", schema: z.string() as never, execute: () => "" })).toThrow(/zod object/);
  });
});
