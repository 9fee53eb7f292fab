import { errorMessage, PathAccessError } from "../errors";
import { neutralizeUntrustedText } from "../text";
import type { Sandbox } from "../sandbox";
import { checkTestsPassed } from "./acceptance-tests-passed";
import type { BashExecution } from "./acceptance-tests-passed";

/** Criteria hygiene limits. */
export const MAX_ACCEPTANCE_CRITERIA = 20;
export const MAX_CRITERION_CHARS = 500;
/** Files above this size are not parsed: `json-valid` / `csv-columns` stay UNVERIFIED. */
export const ACCEPTANCE_PARSE_CAP_BYTES = 50_000;
const DETAIL_CAP = 160;

/** Header of the checklist appended to a completed task result. */
export const ACCEPTANCE_CHECKLIST_HEADER =
  "Acceptance checklist (deterministic checks; execution evidence only, does not validate claim correctness):";

/** Leaf families of the criteria grammar. */
export type AcceptanceFamily = "file" | "file_written" | "tests_passed" | "undecidable";

/** One checked criterion. */
export interface AcceptanceLeaf {
  criterion: string;
  family: AcceptanceFamily;
  /** False = UNVERIFIED (no decision possible from the evidence). */
  checked: boolean;
  holds: boolean;
  detail: string;
}

/** The verdict stored in `additional_kwargs.subagent_acceptance_verdict`. */
export interface AcceptanceVerdict {
  source: "acceptance_checklist";
  requirement: "delegation_acceptance_criteria";
  leaves: AcceptanceLeaf[];
  unchecked: string[];
  all_hold: boolean;
}

/** Strip, drop empty items, keep at most 20 of at most 500 chars each, neutralise framework tags. */
export function sanitizeAcceptanceCriteria(items: readonly unknown[] | null | undefined): string[] {
  const out: string[] = [];
  for (const raw of items ?? []) {
    if (typeof raw !== "string") continue;
    const s = raw.trim();
    if (!s) continue;
    out.push(neutralizeUntrustedText(s.slice(0, MAX_CRITERION_CHARS)));
    if (out.length >= MAX_ACCEPTANCE_CRITERIA) break;
  }
  return out;
}

type Parsed =
  | { family: "file"; path: string; predicate: "exists" | "non-empty" | "json-valid" | "csv-columns"; columns: string[] }
  | { family: "file_written"; path: string }
  | { family: "tests_passed"; command: string }
  | { family: "undecidable" };

/** Parse one criterion (case-insensitive keywords). */
export function parseCriterion(text: string): Parsed {
  const s = text.trim();
  let m = /^file_written:\s*(\S+)\s*$/i.exec(s);
  if (m) return { family: "file_written", path: m[1] };
  m = /^tests_passed:\s*(.+)$/is.exec(s);
  if (m) return { family: "tests_passed", command: m[1].trim() };
  m = /^file:\s*(\S+)\s+(exists|non-empty|json-valid|csv-columns:\s*(.+))\s*$/i.exec(s);
  if (m) {
    const word = m[2].toLowerCase();
    if (word.startsWith("csv-columns")) {
      const columns = (m[3] ?? "").split(",").map((c) => c.trim()).filter(Boolean);
      return columns.length ? { family: "file", path: m[1], predicate: "csv-columns", columns } : { family: "undecidable" };
    }
    return { family: "file", path: m[1], predicate: word as "exists" | "non-empty" | "json-valid", columns: [] };
  }
  return { family: "undecidable" };
}

const USER_DATA = "/mnt/user-data";

/** A criterion path as a virtual thread path: `/mnt/user-data/...` as is, relative paths under the workspace; else undefined. */
export function resolveCriterionPath(path: string): string | undefined {
  if (path.startsWith("/")) return path === USER_DATA || path.startsWith(`${USER_DATA}/`) ? path : undefined;
  const rel = path.replace(/^\.\//, "");
  if (!rel || rel.split("/").includes("..")) return undefined;
  return `${USER_DATA}/workspace/${rel}`;
}

function cut(s: string): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length <= DETAIL_CAP ? one : `${one.slice(0, DETAIL_CAP - 1)}…`;
}

/** The first CSV record's fields (quotes and a UTF-8 BOM handled). */
export function csvHeader(text: string): string[] {
  const src = text.replace(/^\uFEFF/, "");
  const fields: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (quoted) {
      if (ch === '"' && src[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === ",") {
      fields.push(cur.trim());
      cur = "";
    } else if (ch === "\n" || ch === "\r") break;
    else cur += ch;
  }
  fields.push(cur.trim());
  return fields;
}

/** Where the checker reads evidence. */
export interface AcceptanceEvidence {
  /** The thread's sandbox (files); without it file criteria are UNVERIFIED. */
  sandbox?: Sandbox;
  /** Bash executions recorded during the sub-agent's run. */
  bashExecutions: readonly BashExecution[];
}

async function checkFile(p: Extract<Parsed, { family: "file" | "file_written" }>, sandbox: Sandbox | undefined): Promise<Omit<AcceptanceLeaf, "criterion" | "family">> {
  const virtual = resolveCriterionPath(p.path);
  if (!virtual) return { checked: false, holds: false, detail: `path ${p.path} is outside the thread's files` };
  if (!sandbox) return { checked: false, holds: false, detail: "no sandbox to read the thread's files" };
  let stat;
  try {
    stat = await sandbox.stat(virtual);
  } catch (err) {
    return { checked: false, holds: false, detail: err instanceof PathAccessError ? "path not accessible" : `stat failed: ${errorMessage(err)}` };
  }
  if (!stat) return { checked: true, holds: false, detail: "file does not exist" };
  if (!stat.isFile) return { checked: true, holds: false, detail: "not a regular file" };
  if (p.family === "file_written") {
    try {
      await sandbox.readFileBytes(virtual);
    } catch (err) {
      return { checked: true, holds: false, detail: `file exists but could not be read back: ${errorMessage(err)}` };
    }
    return { checked: true, holds: true, detail: `exists and was read back (${stat.size} bytes)` };
  }
  if (p.predicate === "exists") return { checked: true, holds: true, detail: `exists (${stat.size} bytes)` };
  if (p.predicate === "non-empty") return stat.size > 0 ? { checked: true, holds: true, detail: `${stat.size} bytes` } : { checked: true, holds: false, detail: "file is empty" };
  if (stat.size > ACCEPTANCE_PARSE_CAP_BYTES) {
    return { checked: false, holds: false, detail: `file is ${stat.size} bytes, above the ${ACCEPTANCE_PARSE_CAP_BYTES.toLocaleString("en-US")}-byte check cap` };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await sandbox.readFileBytes(virtual));
  } catch (err) {
    return { checked: true, holds: false, detail: err instanceof TypeError ? "file is not valid UTF-8" : `read failed: ${errorMessage(err)}` };
  }
  if (p.predicate === "json-valid") {
    try {
      JSON.parse(text);
      return { checked: true, holds: true, detail: "parses as JSON" };
    } catch (err) {
      return { checked: true, holds: false, detail: `invalid JSON: ${errorMessage(err)}` };
    }
  }
  const header = csvHeader(text);
  const have = new Set(header.map((h) => h.toLowerCase()));
  const missing = p.columns.filter((c) => !have.has(c.toLowerCase()));
  return missing.length
    ? { checked: true, holds: false, detail: `missing column(s) ${missing.join(", ")}; header is ${header.join(",")}` }
    : { checked: true, holds: true, detail: `header has ${p.columns.join(", ")}` };
}

/**
 * Check each criterion deterministically against the thread's files and the
 * recorded bash executions (nothing is re-run). A criterion outside the
 * grammar, or one the evidence cannot decide, is UNVERIFIED, never a pass.
 * A checker failure on one leaf makes that leaf UNVERIFIED only.
 */
export async function checkAcceptanceCriteria(criteria: readonly string[], evidence: AcceptanceEvidence): Promise<AcceptanceVerdict> {
  const leaves: AcceptanceLeaf[] = [];
  for (const criterion of criteria) {
    const p = parseCriterion(criterion);
    let r: Omit<AcceptanceLeaf, "criterion" | "family">;
    try {
      if (p.family === "undecidable") r = { checked: false, holds: false, detail: "not a deterministic criterion (use file:, file_written: or tests_passed:)" };
      else if (p.family === "tests_passed") r = checkTestsPassed(p.command, evidence.bashExecutions);
      else r = await checkFile(p, evidence.sandbox);
    } catch (err) {
      r = { checked: false, holds: false, detail: `check failed: ${errorMessage(err)}` };
    }
    leaves.push({ criterion, family: p.family, checked: r.checked, holds: r.checked && r.holds, detail: cut(r.detail) });
  }
  return {
    source: "acceptance_checklist",
    requirement: "delegation_acceptance_criteria",
    leaves,
    unchecked: leaves.filter((l) => !l.checked).map((l) => l.criterion),
    all_hold: leaves.length > 0 && leaves.every((l) => l.checked && l.holds),
  };
}

function label(l: AcceptanceLeaf): string {
  return !l.checked ? "UNVERIFIED" : l.holds ? "holds" : "does not hold";
}

/** The checklist text appended to the task result. */
export function renderAcceptanceChecklist(verdict: AcceptanceVerdict): string {
  return [ACCEPTANCE_CHECKLIST_HEADER, ...verdict.leaves.map((l) => `- [${label(l)}] ${l.criterion} — ${l.detail}`)].join("\n");
}

/** One-line ledger summary: `acceptance: N hold, M does not hold, K UNVERIFIED`. */
export function summarizeAcceptance(verdict: AcceptanceVerdict): string {
  const hold = verdict.leaves.filter((l) => l.checked && l.holds).length;
  const not = verdict.leaves.filter((l) => l.checked && !l.holds).length;
  const unv = verdict.leaves.filter((l) => !l.checked).length;
  return `acceptance: ${hold} hold, ${not} does not hold, ${unv} UNVERIFIED`;
}
