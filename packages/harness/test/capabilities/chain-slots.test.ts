import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { CHAIN_ORDER, placeInChain, SLOT, slotOfName } from "../../src/capabilities";
import type { ChainSlot, SlottedMiddleware } from "../../src/capabilities";
import { MIDDLEWARE_ORDER } from "../../src/agents";
import { ValidationError } from "../../src/errors";

const mw = (name: string) => ({ name });

/**
 * Never called: these lines only have to fail to compile (`tsc` checks that
 * each `@ts-expect-error` is needed, so a slot that stopped being typed
 * breaks the typecheck).
 */
export function wrongSlotsDoNotCompile(): SlottedMiddleware[] {
  // @ts-expect-error a misspelt slot is not a member of SLOT
  const typo: SlottedMiddleware = { slot: SLOT.Memroy, middleware: mw("MemoryMiddleware") as never };
  // @ts-expect-error a name string is not a slot
  const named: SlottedMiddleware = { slot: "MemoryMiddleware", middleware: mw("MemoryMiddleware") as never };
  // @ts-expect-error a hand-made object lacks the slot brand
  const handMade: SlottedMiddleware = { slot: { middleware: "MemoryMiddleware", rank: 21 }, middleware: mw("MemoryMiddleware") as never };
  return [typo, named, handMade];
}

// Outside the repository, so a typecheck of the tree never sees the deliberately wrong snippets.
const tmp = mkdtempSync(path.join(tmpdir(), "df-slot-check-"));
const SLOTS_MODULE = path.resolve(__dirname, "../../src/capabilities/chain-slots");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Type-check snippets (one program, one file each) against the real slot module with the repository's compiler options. */
function diagnostics(snippets: string[]): ts.Diagnostic[][] {
  const files = snippets.map((snippet, i) => {
    const file = path.join(tmp, `snippet-${i}.ts`);
    writeFileSync(file, `import { SLOT } from ${JSON.stringify(SLOTS_MODULE)};\nimport type { ChainSlot } from ${JSON.stringify(SLOTS_MODULE)};\n${snippet}\n`);
    return file;
  });
  const configPath = path.resolve(__dirname, "../../../../tsconfig.json");
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, path.dirname(configPath));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true, types: ["node"] });
  return files.map((f) => [...ts.getPreEmitDiagnostics(program, program.getSourceFile(f))]);
}

describe("typed chain slots", () => {
  it("a misspelt slot or a name string does not compile; a real slot does", () => {
    const [ok, typo, str] = diagnostics(["export const ok: ChainSlot = SLOT.Memory;", "export const typo: ChainSlot = SLOT.Memroy;", 'export const str: ChainSlot = "MemoryMiddleware";']);
    expect(ok).toEqual([]);
    expect(typo.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("\n")).toMatch(/Memroy/);
    expect(str.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("\n")).toMatch(/not assignable to type 'ChainSlot'/);
  }, 120_000);

  it("there is one slot per DeerFlow middleware, in DeerFlow's order, plus the custom slot after TokenBudget", () => {
    expect([...CHAIN_ORDER]).toEqual([...MIDDLEWARE_ORDER]);
    const own = CHAIN_ORDER.map((name) => slotOfName(name));
    expect(own.map((s) => s.middleware)).toEqual([...CHAIN_ORDER]);
    expect(own.map((s) => s.rank)).toEqual(CHAIN_ORDER.map((_, i) => i));
    expect(slotOfName("MyOwnMiddleware")).toBe(SLOT.Custom);
    expect(SLOT.Custom.rank).toBeGreaterThan(SLOT.TokenBudget.rank);
    expect(SLOT.Custom.rank).toBeLessThan(SLOT.TerminalResponse.rank);
  });

  it("every middleware lands in its slot, whatever order the entries come in", () => {
    const entries: SlottedMiddleware[] = CHAIN_ORDER.map((name) => ({ slot: slotOfName(name), middleware: mw(name) as never }));
    entries.push({ slot: SLOT.Custom, middleware: mw("MineA") as never }, { slot: SLOT.Custom, middleware: mw("MineB") as never });
    // a deterministic shuffle: reversed, then every other one moved to the front
    const shuffled = [...entries].reverse();
    const mixed = [...shuffled.filter((_, i) => i % 2 === 0), ...shuffled.filter((_, i) => i % 2 === 1)];
    const names = placeInChain(mixed).map((m) => m.name);
    const tokenBudget = names.indexOf("TokenBudgetMiddleware");
    expect(names.filter((n) => !n.startsWith("Mine"))).toEqual([...CHAIN_ORDER]);
    // custom middlewares right after TokenBudget, in the order they were given (B came first in `mixed`)
    expect(names.slice(tokenBudget + 1, tokenBudget + 3).sort()).toEqual(["MineA", "MineB"]);
    expect(names.at(-1)).toBe("ClarificationMiddleware");
  });

  it("a middleware in another middleware's slot is refused, naming both", () => {
    const wrong = (slot: ChainSlot, name: string) => () => placeInChain([{ slot, middleware: mw(name) as never }]);
    expect(wrong(SLOT.Title, "MemoryMiddleware")).toThrow(ValidationError);
    expect(wrong(SLOT.Title, "MemoryMiddleware")).toThrow(/'MemoryMiddleware' was placed in the slot of TitleMiddleware; it belongs in the slot of MemoryMiddleware/);
    expect(wrong(SLOT.Custom, "TitleMiddleware")).toThrow(/belongs in the slot of TitleMiddleware/);
    expect(wrong(SLOT.Title, "MyTitle")).toThrow(/belongs in SLOT.Custom/);
    try {
      wrong(SLOT.Title, "MemoryMiddleware")();
    } catch (err) {
      expect((err as ValidationError).code).toBe("middleware_slot_mismatch");
    }
  });
});
