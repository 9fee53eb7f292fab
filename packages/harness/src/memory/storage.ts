/**
 * `memory.json` files, one per (user, agent): `{base}/users/{user}/memory.json`
 * for the default agent and `{base}/users/{user}/agents/{agent}/memory.json`
 * for a named one (agent names lowercased). Writes go to a temporary file in
 * the same directory, are flushed to disk and then renamed over the old file,
 * so a crash mid-write leaves the previous version intact. Reads are cached
 * and revalidated by file size and mtime, so an external edit is picked up.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { DeerFlowError } from "../errors";
import { writeFileAtomicSync } from "../fs";
import type { AtomicWriteSteps } from "../fs";
import { SAFE_ID } from "../sandbox/ids";
import { emptyMemoryDocument, emptySection, HISTORY_SECTIONS, USER_SECTIONS } from "./types";
import type { MemoryDocument, MemoryFact, MemoryScope } from "./types";

/** A stored memory file is not valid JSON or not a memory document. */
export class MemoryCorruptionError extends DeerFlowError {
  constructor(file: string, cause?: unknown) {
    super("memory_corrupted", `Stored memory data is corrupted: ${file}`, { cause, details: { file } });
  }
}

/** A write lost a race with another writer (the revision moved). */
export class MemoryConflictError extends DeerFlowError {
  constructor(expected: number, actual: number) {
    super("memory_conflict", "Memory changed concurrently; reload and retry.", { details: { expected, actual } });
  }
}

/** Low-level file operations of the shared atomic write (replaceable in tests to simulate a crash). */
export type MemoryFileOps = AtomicWriteSteps;

/** A user or agent name that can become a directory name. */
export function safeScopeName(kind: "user" | "agent", name: string): string {
  const n = kind === "agent" ? name.toLowerCase() : name;
  if (!SAFE_ID.test(n)) throw new DeerFlowError(`invalid_${kind}_id`, `Invalid ${kind} name ${JSON.stringify(name)} for memory`, { details: { kind } });
  return n;
}

/** Stable text key of a scope (`user` or `user/agent`). */
export function scopeKey(scope: MemoryScope): string {
  return scope.agentName ? `${scope.userId}/${scope.agentName.toLowerCase()}` : scope.userId;
}

function normalizeDocument(raw: unknown): MemoryDocument {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("not an object");
  const r = raw as Record<string, any>;
  const doc = emptyMemoryDocument();
  doc.version = typeof r.version === "string" ? r.version : "1.0";
  doc.revision = Number.isInteger(r.revision) && r.revision >= 0 ? r.revision : 0;
  doc.lastUpdated = typeof r.lastUpdated === "string" ? r.lastUpdated : "";
  for (const n of USER_SECTIONS) doc.user[n] = section(r.user?.[n]);
  for (const n of HISTORY_SECTIONS) doc.history[n] = section(r.history?.[n]);
  if (r.facts !== undefined && !Array.isArray(r.facts)) throw new Error("facts is not a list");
  doc.facts = (r.facts ?? []).flatMap((f: unknown) => {
    const x = normalizeFact(f);
    return x ? [x] : [];
  });
  return doc;
}

function section(v: any): { summary: string; updatedAt: string } {
  if (!v || typeof v !== "object") return emptySection();
  return { summary: typeof v.summary === "string" ? v.summary : "", updatedAt: typeof v.updatedAt === "string" ? v.updatedAt : "" };
}

/** Coerce one stored or imported fact; null when it has no id or content. */
export function normalizeFact(f: unknown): MemoryFact | null {
  if (!f || typeof f !== "object") return null;
  const r = f as Record<string, any>;
  if (typeof r.id !== "string" || !r.id || typeof r.content !== "string" || !r.content.trim()) return null;
  const c = typeof r.confidence === "number" && Number.isFinite(r.confidence) ? Math.min(1, Math.max(0, r.confidence)) : 0.5;
  const out: MemoryFact = { ...r, id: r.id, content: r.content, category: typeof r.category === "string" && r.category.trim() ? r.category : "context", confidence: c, createdAt: typeof r.createdAt === "string" ? r.createdAt : "", source: typeof r.source === "string" ? r.source : "unknown" } as MemoryFact;
  // Only the two unverified origins are stored; anything else (absent, "user", junk) is the user's.
  if (r.provenance !== "tool" && r.provenance !== "upload") delete out.provenance;
  return out;
}

/** Reads and writes the `memory.json` files under one base directory. */
export class MemoryFileStorage {
  private readonly cache = new Map<string, { size: number; mtimeMs: number; doc: MemoryDocument }>();

  constructor(
    readonly baseDir: string,
    private readonly ops?: MemoryFileOps,
  ) {}

  /** The file holding a scope's memory. */
  filePath(scope: MemoryScope): string {
    const user = safeScopeName("user", scope.userId);
    const dir = scope.agentName ? path.join(this.baseDir, "users", user, "agents", safeScopeName("agent", scope.agentName)) : path.join(this.baseDir, "users", user);
    return path.join(dir, "memory.json");
  }

  /**
   * The scope's document (a fresh empty one when there is no file).
   * Callers get the cached object: treat it as read-only.
   * @throws MemoryCorruptionError when the file cannot be parsed.
   */
  load(scope: MemoryScope): MemoryDocument {
    const file = this.filePath(scope);
    let st;
    try {
      st = statSync(file);
    } catch {
      this.cache.delete(file);
      return emptyMemoryDocument();
    }
    const hit = this.cache.get(file);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.doc;
    let doc: MemoryDocument;
    try {
      doc = normalizeDocument(JSON.parse(readFileSync(file, "utf8")));
    } catch (err) {
      throw new MemoryCorruptionError(file, err);
    }
    this.cache.set(file, { size: st.size, mtimeMs: st.mtimeMs, doc });
    return doc;
  }

  /** Drop the cache for a scope (the next load reads the file). */
  invalidate(scope: MemoryScope): void {
    this.cache.delete(this.filePath(scope));
  }

  /**
   * Write a document atomically with the next revision.
   * @param expectedRevision the revision the caller started from; a mismatch is a {@link MemoryConflictError}.
   */
  save(scope: MemoryScope, doc: MemoryDocument, expectedRevision?: number): MemoryDocument {
    const file = this.filePath(scope);
    if (expectedRevision !== undefined) {
      this.invalidate(scope);
      const actual = this.load(scope).revision;
      if (actual !== expectedRevision) throw new MemoryConflictError(expectedRevision, actual);
    }
    const next: MemoryDocument = { ...doc, version: doc.version || "1.0", revision: (expectedRevision ?? doc.revision) + 1, lastUpdated: new Date().toISOString() };
    try {
      writeFileAtomicSync(file, JSON.stringify(next, null, 2), { mode: 0o600, steps: this.ops });
    } catch (err) {
      this.invalidate(scope);
      throw err;
    }
    const st = statSync(file);
    this.cache.set(file, { size: st.size, mtimeMs: st.mtimeMs, doc: next });
    return next;
  }
}
