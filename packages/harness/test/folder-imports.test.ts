/**
 * The layering of the harness's folders, read from the source: which folder
 * imports which (value imports only; `import type` is erased and cannot
 * create a load-order cycle). middlewares/ and subagents/ once imported each
 * other because the text helpers lived in middlewares/; text/ and fs/ are the
 * shared homes now, and capabilities/ sits above the subsystems it plugs in.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(__dirname, "../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** The relative module specifiers a file imports or re-exports as values. */
function valueImports(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const allTypes = !!clause && !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      if (!allTypes && ts.isStringLiteral(st.moduleSpecifier)) out.push(st.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      if (st.isTypeOnly) continue;
      const named = st.exportClause;
      if (named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)) continue;
      out.push(st.moduleSpecifier.text);
    }
  }
  return out.filter((s) => s.startsWith("."));
}

/** folder → folders it imports values from (top-level folders of src/; files at the top are ignored). */
function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  const folders = new Set(readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name));
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep);
    if (rel.length < 2) continue;
    const from = rel[0];
    const edges = graph.get(from) ?? new Map<string, string[]>();
    graph.set(from, edges);
    for (const spec of valueImports(file)) {
      const target = path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep);
      // `../text` names a folder (its index.ts); `../index` is a file at the top, not a folder.
      const isFolder = target.length > 1 || folders.has(target[0]);
      if (target[0] === ".." || !isFolder || target[0] === from) continue;
      edges.set(target[0], [...(edges.get(target[0]) ?? []), path.relative(SRC, file)]);
    }
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan). */
function cycles(graph: Map<string, Map<string, string[]>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("folder layering of the harness", () => {
  const graph = folderGraph();

  it("the scan sees real imports (middlewares use text/, subagents use text/)", () => {
    expect([...(graph.get("middlewares")?.keys() ?? [])]).toContain("text");
    expect([...(graph.get("subagents")?.keys() ?? [])]).toContain("text");
  });

  it("middlewares/ and subagents/ are not on one import cycle, directly or through other folders", () => {
    const offending = cycles(graph).filter((c) => c.includes("middlewares") && c.includes("subagents"));
    const direct = graph.get("subagents")?.get("middlewares") ?? [];
    expect({ offending, subagentsImportingMiddlewares: direct }).toEqual({ offending: [], subagentsImportingMiddlewares: [] });
  });

  it("the shared homes text/, fs/ and net/ import no other folder of the harness", () => {
    expect([...(graph.get("text")?.keys() ?? [])]).toEqual([]);
    expect([...(graph.get("fs")?.keys() ?? [])]).toEqual([]);
    expect([...(graph.get("net")?.keys() ?? [])]).toEqual([]);
  });

  it("config/ imports only errors/ and net/: every subsystem reads its config from it, so it can import none of them", () => {
    expect([...(graph.get("config")?.keys() ?? [])].sort()).toEqual(["errors", "net"]);
  });

  it("no subsystem imports capabilities/: the runtime and the lead agent loop over them, nothing below does", () => {
    const importers = [...graph].filter(([, edges]) => edges.has("capabilities")).map(([from]) => from).sort();
    expect(importers.filter((f) => !["agents", "deerflow-runtime"].includes(f))).toEqual([]);
    expect(cycles(graph).filter((c) => c.includes("capabilities") || c.includes("text") || c.includes("fs"))).toEqual([]);
  });
});
