import { yamlLib } from "./yaml-lib";
import type { Document, LineCounter } from "yaml";
import { ConfigError } from "../errors";

/**
 * Parse YAML text into a document with its line index (for key positions).
 * Syntax errors (and duplicate keys) become a {@link ConfigError} naming the
 * file, line and column.
 */
export function parseYamlDocument(text: string, file: string): { doc: Document; lineCounter: LineCounter; value: unknown } {
  const lineCounter = new (yamlLib().LineCounter)();
  const doc = yamlLib().parseDocument(text, { lineCounter });
  if (doc.errors.length) {
    const err = doc.errors[0];
    const pos = err.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    const firstLine = err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`YAML syntax error in ${where}: ${firstLine}`, {
      code: "config_syntax",
      cause: err,
      details: { file, line: pos?.line, column: pos?.col, yamlCode: err.code },
    });
  }
  return { doc, lineCounter, value: doc.toJS({ maxAliasCount: 1000 }) ?? {} };
}

/** Parse YAML text into plain data; errors as in {@link parseYamlDocument}. */
export function parseYamlText(text: string, file: string): unknown {
  return parseYamlDocument(text, file).value;
}

/** Parse JSON text; syntax errors name the file, line and column. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const msg = cause instanceof Error ? cause.message : String(cause);
    let line: number | undefined;
    let column: number | undefined;
    const pos = /position (\d+)/.exec(msg);
    if (pos) {
      const offset = Number(pos[1]);
      const before = text.slice(0, offset);
      line = before.split("\n").length;
      column = offset - before.lastIndexOf("\n");
    }
    const where = line ? `${file}:${line}:${column}` : file;
    throw new ConfigError(`JSON syntax error in ${where}: ${msg}`, {
      code: "config_syntax",
      cause,
      details: { file, line, column },
    });
  }
}
