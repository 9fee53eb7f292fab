/**
 * Where a remembered fact came from. The updater is a model reading a turn
 * that may carry a fetched page, a search result or an uploaded document, and
 * it can be talked into "remembering" what those say; so the pipeline, which
 * knows which parts of the turn were tool results or upload contents, decides
 * the provenance, and the model's own label can only lower it:
 *
 * - A thread with no tool output and no upload contents so far yields
 *   `user` facts (unless the model labelled a fact `tool` / `upload`). The
 *   earlier turns count too: the assistant may repeat in a later turn what
 *   a page said in an earlier one.
 * - Otherwise a fact is `user` only when it is grounded in the user's own
 *   words: at least {@link USER_GROUNDING} of its content words occur in the
 *   human messages of the turn, none of its other words comes from the tool
 *   output or uploads (a question "which CI does the project use?" answered
 *   by a page saying "GitHub Actions" yields a `tool` fact), and the model
 *   did not label it otherwise.
 * - Every other fact is `tool` or `upload`: the kind whose texts share more
 *   of its words (an upload is a tool result that read a file under
 *   `/mnt/user-data/uploads`), the model's label breaking a tie.
 *
 * `memory.json` stays DeerFlow's: the optional `provenance` field is written
 * only for `tool` / `upload` facts; a fact without it is the user's.
 */
import { contentWords } from "./query-terms";
import type { MemoryFact } from "./types";

/** Who a fact rests on. */
export type FactProvenance = "user" | "tool" | "upload";

/** The provenance values stored in `memory.json` (`user` is the absence of the field). */
export const UNVERIFIED_PROVENANCES: ReadonlySet<string> = new Set(["tool", "upload"]);

/** A fact's provenance (missing or unknown = `user`). */
export function factProvenance(f: Pick<MemoryFact, "provenance">): FactProvenance {
  return f.provenance === "tool" || f.provenance === "upload" ? f.provenance : "user";
}

/** Ranking tier: the user's own facts first, then upload contents, then other tool output. */
export function provenanceRank(f: Pick<MemoryFact, "provenance">): number {
  const p = factProvenance(f);
  return p === "user" ? 0 : p === "upload" ? 1 : 2;
}

/** The less trusted of two provenances. */
export function leastTrusted(a: FactProvenance, b: FactProvenance): FactProvenance {
  const rank = (p: FactProvenance) => (p === "user" ? 0 : p === "upload" ? 1 : 2);
  return rank(a) >= rank(b) ? a : b;
}

/** One piece of non-user content a turn carried (a tool result, or a tool result that read an upload). */
export interface TurnEvidence {
  kind: "tool" | "upload";
  /** The tool that produced it. */
  tool: string;
  /** Its text (capped). */
  text: string;
}

/** What the updater's input rested on: the user's words and the untrusted contents, by kind. */
export interface FeedEvidence {
  userText: string;
  tool: string[];
  upload: string[];
}

/** Share of a fact's content words that must occur in the user's messages for it to count as the user's. */
export const USER_GROUNDING = 0.6;

/** True when the feed carried any tool output or upload contents. */
export function hasUntrusted(ev: FeedEvidence | undefined): ev is FeedEvidence {
  return !!ev && (ev.tool.length > 0 || ev.upload.length > 0);
}

const stem = (w: string) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w);

function terms(text: string): Set<string> {
  return new Set(contentWords(text, Number.POSITIVE_INFINITY).map(stem));
}

/** Share (0..1) of `fact`'s content words found in `source`; 0 when the fact has none. */
export function coverage(fact: string, source: Set<string>): number {
  const words = [...terms(fact)];
  if (!words.length) return 0;
  return words.filter((w) => source.has(w)).length / words.length;
}

/** A label the model gave (`source`), normalised; null when it gave none or an unknown one. */
export function provenanceLabel(v: unknown): FactProvenance | null {
  const s = typeof v === "string" ? v.trim().toLowerCase() : "";
  return s === "user" || s === "tool" || s === "upload" ? s : null;
}

/** Decides fact provenance for one feed; the word sets are built once. */
export class ProvenanceJudge {
  private readonly user: Set<string>;
  private readonly tool: Set<string>;
  private readonly upload: Set<string>;

  constructor(private readonly evidence: FeedEvidence | undefined) {
    this.user = terms(evidence?.userText ?? "");
    this.tool = terms((evidence?.tool ?? []).join("\n"));
    this.upload = terms((evidence?.upload ?? []).join("\n"));
  }

  /** The user's own words in the feed (addresses found there are theirs). */
  get userText(): string {
    return this.evidence?.userText ?? "";
  }

  /** True when the feed carried tool output or upload contents. */
  get untrusted(): boolean {
    return hasUntrusted(this.evidence);
  }

  /** Enough of the fact's words are the user's, and none of the rest was supplied by tool output or uploads. */
  private groundedInUser(content: string): boolean {
    const words = [...terms(content)];
    if (!words.length) return false;
    const missing = words.filter((w) => !this.user.has(w));
    if ((words.length - missing.length) / words.length < USER_GROUNDING) return false;
    return !missing.some((w) => this.tool.has(w) || this.upload.has(w));
  }

  /** The provenance of a proposed fact, given the model's label (which can only lower it). */
  decide(content: string, claimed: FactProvenance | null): FactProvenance {
    const ev = this.evidence;
    if (!hasUntrusted(ev)) return claimed ?? "user";
    if (claimed !== "tool" && claimed !== "upload" && this.groundedInUser(content)) return "user";
    if (!ev.upload.length) return "tool";
    if (!ev.tool.length) return "upload";
    const fromUpload = coverage(content, this.upload);
    const fromTool = coverage(content, this.tool);
    if (fromUpload !== fromTool) return fromUpload > fromTool ? "upload" : "tool";
    return claimed === "upload" ? "upload" : "tool";
  }
}
