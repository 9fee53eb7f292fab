import { DEFAULT_YAML_LIMITS, parseYamlBounded } from "../parsing";

/** Kind of an oversized tool output, as detected without an LLM. */
export type ToolOutputKind = "json" | "csv" | "tsv" | "yaml" | "code" | "text" | "unknown";

/** Structured preview data for an oversized tool output. */
export interface ToolOutputSynopsis {
  kind: ToolOutputKind;
  title: string;
  summary: string[];
  structure: string[];
  notableItems: string[];
  /** Raw sample carried by the synopsis itself (binary-like / oversized output). */
  sample: string;
}

const KEY_LIMIT = 12;
const SCALAR_LIMIT = 6;
const TABLE_SAMPLE_ROWS = 50;
const TABLE_COLUMN_LIMIT = 18;
const TABLE_MIN_DATA_ROWS = 5;
const TEXT_HEADER_LIMIT = 16;
const TEXT_EXCERPT_CHARS = 420;
const CODE_IMPORT_LIMIT = 12;
const CODE_SYMBOL_LIMIT = 24;
const JSON_STRUCTURE_LIMIT = 24;
const JSON_STRUCTURE_DEPTH = 4;
const MAX_SYNOPSIS_INPUT_BYTES = 5_000_000;

const CODE_HINTS = [
  /^\s*(?:from\s+\S+\s+import|import\s+\S+)/m,
  /^\s*(?:class|def|async\s+def|function|export\s+function)\s+[A-Za-z_]\w*/m,
  /^\s*(?:package\s+[A-Za-z_][\w.]*|use\s+[A-Za-z_][\w:]*\s*;|pub\s+fn\s+[A-Za-z_]\w*\s*\(|fn\s+[A-Za-z_]\w*\s*\(|public\s+class\s+[A-Za-z_]\w*)/m,
];

function clip(value: string, limit: number): string {
  if (limit <= 0) return "";
  return value.length <= limit ? value : value.slice(0, Math.max(0, limit - 3)) + "...";
}

function oneLine(value: string, limit: number): string {
  return clip(value.replace(/\s+/g, " ").trim(), limit);
}

function headTailSample(content: string, limit: number): string {
  if (limit <= 0) return "";
  if (content.length <= limit) return content;
  const half = Math.max(1, Math.floor(limit / 2));
  return `${content.slice(0, half)}\n...\n${content.slice(-half)}`;
}

function looksBinary(content: string): boolean {
  if (content.includes("\x00")) return true;
  const sample = content.slice(0, 1000);
  let controls = 0;
  for (const ch of sample) {
    const c = ch.charCodeAt(0);
    if (c < 32 && ch !== "\n" && ch !== "\r" && ch !== "\t") controls++;
  }
  return controls / Math.max(1, sample.length) > 0.05;
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null || v === undefined) return "null";
  if (typeof v === "object") return "object";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number") return "number";
  return "string";
}

function jsonShape(v: unknown, depth = 0): string {
  if (depth >= 2) return "...";
  if (Array.isArray(v)) {
    const samples = v.slice(0, 3).map((x) => jsonShape(x, depth + 1)).join(", ");
    return `array(len=${v.length}${samples ? `, first=[${samples}]` : ""})`;
  }
  if (v && typeof v === "object") {
    const keys = Object.keys(v).slice(0, KEY_LIMIT);
    return `object(keys=${Object.keys(v).length}${keys.length ? `: ${keys.join(", ")}` : ""})`;
  }
  return typeName(v);
}

function jsonPath(parent: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function containerDescription(v: unknown): string {
  if (Array.isArray(v)) return `array length ${v.length}${v.length ? `; first item ${typeName(v[0])}` : ""}`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v).slice(0, KEY_LIMIT);
    return `object keys ${Object.keys(v).length}${keys.length ? `; keys ${keys.join(", ")}` : ""}`;
  }
  return typeName(v);
}

function containerPaths(value: unknown): string[] {
  const paths: string[] = [];
  const walk = (node: unknown, path: string, depth: number): void => {
    if (paths.length >= JSON_STRUCTURE_LIMIT || depth >= JSON_STRUCTURE_DEPTH) return;
    if (Array.isArray(node)) {
      if (node.length && node[0] && typeof node[0] === "object") walk(node[0], `${path}[]`, depth + 1);
      return;
    }
    if (node && typeof node === "object") {
      for (const [k, child] of Object.entries(node).slice(0, KEY_LIMIT)) {
        if (paths.length >= JSON_STRUCTURE_LIMIT) break;
        const next = jsonPath(path, k);
        if (child && typeof child === "object") {
          paths.push(`${next}: ${containerDescription(child)}`);
          walk(child, next, depth + 1);
        }
      }
    }
  };
  walk(value, "$", 0);
  return paths;
}

function scalarExamples(value: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: string, depth: number): void => {
    if (out.length >= SCALAR_LIMIT || depth >= JSON_STRUCTURE_DEPTH) return;
    if (Array.isArray(node)) {
      node.slice(0, 2).forEach((c, i) => walk(c, `${path}[${i}]`, depth + 1));
      return;
    }
    if (node && typeof node === "object") {
      for (const [k, c] of Object.entries(node).slice(0, KEY_LIMIT)) {
        walk(c, `${path}.${k}`, depth + 1);
        if (out.length >= SCALAR_LIMIT) break;
      }
      return;
    }
    if (out.length < SCALAR_LIMIT) {
      out.push(`${path}: ${typeof node === "string" ? JSON.stringify(clip(node, 80)) : clip(String(node), 80)}`);
    }
  };
  walk(value, "$", 0);
  return out;
}

function tryJson(content: string): ToolOutputSynopsis | null {
  const stripped = content.trim();
  if (!stripped.startsWith("{") && !stripped.startsWith("[")) return null;
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch {
    return null;
  }
  const summary: string[] = [];
  const structure = [`shape: ${jsonShape(value)}`, ...containerPaths(value)];
  if (Array.isArray(value)) {
    summary.push(`JSON array with ${value.length} items.`);
    if (value.length) structure.push(`first item type: ${typeName(value[0])}`);
  } else if (value && typeof value === "object") {
    const keys = Object.keys(value);
    summary.push(`JSON object with ${keys.length} top-level keys.`);
    summary.push(`Top-level keys: ${keys.slice(0, KEY_LIMIT).join(", ") || "(none)"}`);
  } else {
    summary.push(`JSON ${typeName(value)}.`);
  }
  return { kind: "json", title: "JSON output", summary, structure, notableItems: scalarExamples(value), sample: "" };
}

function splitDelimited(line: string, delimiter: string): string[] {
  const cells: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"' && cur === "") quoted = true;
    else if (ch === delimiter) {
      cells.push(cur);
      cur = "";
    } else cur += ch;
  }
  cells.push(cur);
  return cells;
}

function tryTable(content: string, delimiter: string, kind: "csv" | "tsv"): ToolOutputSynopsis | null {
  const rows = content
    .split(/\r?\n/)
    .slice(0, TABLE_SAMPLE_ROWS)
    .map((l) => splitDelimited(l, delimiter))
    .filter((r) => r.some((c) => c.trim()));
  if (rows.length < 2 || rows[0].length < 2) return null;
  const width = rows[0].length;
  const consistent = rows.slice(1, 11).filter((r) => r.length === width);
  if (consistent.length < TABLE_MIN_DATA_ROWS) return null;
  const header = rows[0];
  if (header.some((c) => !/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(c.trim()) || /^[ \t]/.test(c))) return null;
  const columns = header.map((c, i) => c.trim() || `column_${i + 1}`);
  const dataRows = Math.max(0, content.split(/\r?\n/).filter((l) => l.trim()).length - 1);
  const pairs = columns.slice(0, TABLE_COLUMN_LIMIT).map((c, i) => `${c}=${clip(rows[1][i] ?? "", 80)}`);
  return {
    kind,
    title: kind === "csv" ? "CSV table output" : "TSV table output",
    summary: [`${kind.toUpperCase()} table with ${dataRows} data rows and ${width} columns.`],
    structure: [`columns: ${columns.slice(0, TABLE_COLUMN_LIMIT).join(", ")}`, `first data row: ${pairs.join(" | ") || "(none)"}`],
    notableItems: [],
    sample: "",
  };
}

function looksCode(content: string): boolean {
  return CODE_HINTS.some((re) => re.test(content));
}

function looksYaml(content: string): boolean {
  if (content.trimStart().startsWith("---")) return true;
  if (looksCode(content)) return false;
  let keyLike = 0;
  for (const line of content.split(/\r?\n/).slice(0, 80)) {
    if (!/^\s*[A-Za-z_][A-Za-z0-9_.-]*:\s*\S.*$/.test(line)) continue;
    const key = line.split(":", 1)[0].trim();
    if (key === key.toUpperCase() && key !== key.toLowerCase() && !key.includes("_")) continue;
    if (++keyLike >= 3) return true;
  }
  return false;
}

function tryYaml(content: string): ToolOutputSynopsis | null {
  if (!looksYaml(content)) return null;
  let value: unknown;
  try {
    // tool output is whatever a page, a file or an MCP server made it: measured before it is composed, since
    // composing a mapping takes time in the square of its width (a wide one held the event loop for seconds)
    value = parseYamlBounded(content, "tool output", { ...DEFAULT_YAML_LIMITS, maxBytes: 500_000 });
  } catch {
    return null;
  }
  if (!value || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    return {
      kind: "yaml",
      title: "YAML output",
      summary: [`YAML array with ${value.length} items.`],
      structure: value.length ? [`first item type: ${typeName(value[0])}`] : [],
      notableItems: [],
      sample: "",
    };
  }
  const entries = Object.entries(value);
  if (entries.length && entries.every(([, v]) => typeof v === "string")) return null;
  const keys = entries.map(([k]) => k);
  return {
    kind: "yaml",
    title: "YAML output",
    summary: [`YAML object with ${keys.length} top-level keys.`, `Top-level keys: ${keys.slice(0, KEY_LIMIT).join(", ")}`],
    structure: entries.slice(0, KEY_LIMIT).map(([k, v]) => `${k}: ${typeName(v)}`),
    notableItems: [],
    sample: "",
  };
}

function summarizeCode(content: string): ToolOutputSynopsis {
  const lines = content.split(/\r?\n/);
  const imports: string[] = [];
  const symbols: string[] = [];
  for (const line of lines) {
    const s = line.trim();
    const im = /^(?:from\s+(\S+)\s+import|import\s+(\S+))/.exec(s);
    if (im) {
      imports.push(oneLine(im[1] ?? im[2] ?? "", 160));
      continue;
    }
    const sym = /^(class|def|async\s+def|function|export\s+function|pub\s+fn|fn)\s+([A-Za-z_]\w*)/.exec(s);
    if (sym) symbols.push(oneLine(`${sym[1]} ${sym[2]}`, 180));
  }
  const structure = [`line count: ${lines.length}`];
  if (imports.length) structure.push(`imports: ${imports.slice(0, CODE_IMPORT_LIMIT).join(", ")}`);
  return {
    kind: "code",
    title: "Code-like output",
    summary: [`Code-like text with ${lines.length} lines.`],
    structure,
    notableItems: symbols.slice(0, CODE_SYMBOL_LIMIT),
    sample: "",
  };
}

function summarizeText(content: string, toolName: string, includeExcerpts: boolean): ToolOutputSynopsis {
  const lines = content.split(/\r?\n/);
  const normalized = content.replace(/\s+/g, " ").trim();
  const headers: string[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    const s = line.trim();
    if (!s || !(/^#{1,6}\s+/.test(s) || /^[A-Z0-9][A-Z0-9\s:_-]{6,}$/.test(s))) continue;
    const h = oneLine(s, 160);
    if (seen.has(h)) continue;
    seen.add(h);
    headers.push(h);
    if (headers.length >= TEXT_HEADER_LIMIT) break;
  }
  const words = normalized ? normalized.split(" ").length : 0;
  const summary = [
    `Text output${toolName ? ` from ${toolName}` : ""} with ${content.length} characters, ${words} words, and ${lines.length} lines.`,
    `Detected section headers: ${headers.length ? headers.join(" | ") : "none detected"}.`,
  ];
  if (includeExcerpts) {
    summary.push(`Opening excerpt: ${oneLine(content.slice(0, TEXT_EXCERPT_CHARS), TEXT_EXCERPT_CHARS) || "(empty)"}`);
    if (content.length > TEXT_EXCERPT_CHARS) {
      const closer = oneLine(content.slice(Math.max(TEXT_EXCERPT_CHARS, content.length - TEXT_EXCERPT_CHARS)), TEXT_EXCERPT_CHARS);
      if (closer) summary.push(`Closing excerpt: ${closer}`);
    }
  }
  return { kind: "text", title: "Text output", summary, structure: [], notableItems: [], sample: "" };
}

/** A typed, deterministic synopsis of `content` (json, csv/tsv, yaml, code, text, binary-like). */
export function buildToolOutputSynopsis(content: string, toolName = ""): ToolOutputSynopsis {
  if (content === "") {
    return { kind: "unknown", title: "Empty output", summary: ["The tool returned an empty string."], structure: [], notableItems: [], sample: "" };
  }
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > MAX_SYNOPSIS_INPUT_BYTES) {
    return {
      kind: "unknown",
      title: "Oversized output",
      summary: [`The output has ${content.length} characters (${(bytes / 1024 / 1024).toFixed(1)} MB). Parsing skipped due to size limit.`],
      structure: [],
      notableItems: [],
      sample: headTailSample(content, TEXT_EXCERPT_CHARS * 2),
    };
  }
  if (looksBinary(content)) {
    return {
      kind: "unknown",
      title: "Binary-like output",
      summary: [`The output has ${content.length} characters and includes non-text control bytes.`],
      structure: [],
      notableItems: [],
      sample: headTailSample(content, TEXT_EXCERPT_CHARS * 2),
    };
  }
  return (
    tryJson(content) ??
    (content.includes("\t") ? tryTable(content, "\t", "tsv") : null) ??
    (content.includes(",") ? tryTable(content, ",", "csv") : null) ??
    tryYaml(content) ??
    (looksCode(content) ? summarizeCode(content) : summarizeText(content, toolName, true))
  );
}

function rawSample(content: string, head: number, tail: number, existing: string): string {
  if (existing) return existing;
  if (head <= 0 && tail <= 0) return "";
  if (content.length <= head + tail) return content;
  const parts: string[] = [];
  if (head > 0) {
    let h = content.slice(0, head);
    const snap = h.lastIndexOf("\n");
    if (snap > 0) h = h.slice(0, snap);
    parts.push(h);
  }
  if (tail > 0) {
    let t = content.slice(-tail);
    const snap = t.indexOf("\n");
    if (snap >= 0 && snap < t.length - 1) t = t.slice(snap + 1);
    parts.push(t);
  }
  return parts.length === 2 ? `${parts[0]}\n...\n${parts[1]}` : parts[0];
}

/**
 * Render the replacement text of an externalized tool output: a typed
 * synopsis, a raw head/tail sample, and a `read_file` reference to the
 * virtual path holding the full output.
 */
export function renderToolOutputPreview(
  content: string,
  opts: { toolName: string; virtualPath: string; headChars: number; tailChars: number },
): string {
  const total = content.length;
  const head = Math.max(0, opts.headChars);
  const tail = Math.max(0, opts.tailChars);
  let synopsis = buildToolOutputSynopsis(content, opts.toolName);
  if (synopsis.kind === "text" && head + tail > 0 && total > head + tail) {
    synopsis = summarizeText(content, opts.toolName, false);
  }
  const lines = [
    `[Full ${opts.toolName} output saved to ${opts.virtualPath} (${total} chars, ~${Math.floor(total / 4)} tokens).]`,
    `[Preview kind: ${synopsis.kind}. This is a structured synopsis, not a raw head/tail truncation.]`,
    "",
    `${synopsis.title}:`,
    ...synopsis.summary.map((s) => `- ${s}`),
  ];
  if (synopsis.structure.length) lines.push("", "Structure:", ...synopsis.structure.map((s) => `- ${s}`));
  if (synopsis.notableItems.length) lines.push("", "Notable items:", ...synopsis.notableItems.map((s) => `- ${s}`));
  const sample = rawSample(content, head, tail, synopsis.sample);
  if (sample) lines.push("", "Raw sample (head + tail, clipped to head_chars / tail_chars):", sample);
  lines.push("", "Access:", `- Use read_file on ${opts.virtualPath} with start_line and end_line to inspect the raw output.`);
  return lines.join("\n");
}
