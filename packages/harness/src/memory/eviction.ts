/**
 * Capacity policies for `max_facts`. `confidence` keeps the most confident
 * facts; `hybrid-v1` scores confidence, how recently the user confirmed a fact
 * and how often it was recalled, and reserves a few slots for corrections.
 */
import type { MemoryBackendConfig } from "../config/memory-config";
import type { MemoryFact } from "./types";

/** Recall statistics of one fact (from the index). */
export interface FactUsage {
  accessHeat: number;
  lastAccessedAt: string | null;
}

const DAY_MS = 86_400_000;
const decay = (days: number, halfLife: number) => (halfLife > 0 ? 2 ** (-Math.max(0, days) / halfLife) : 0);
const clamp01 = (v: unknown, d = 0.5) => (typeof v === "number" && Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : d);
const time = (s: string | null | undefined) => {
  const t = s ? Date.parse(s) : NaN;
  return Number.isFinite(t) ? t : null;
};

/** The score a policy gives a fact (higher is kept). */
export function evictionScore(f: MemoryFact, cfg: MemoryBackendConfig, usage: FactUsage | undefined, now: number): number {
  const confidence = clamp01(f.confidence);
  if (cfg.fact_eviction_policy === "confidence") return confidence;
  const confirmed = time(f.lastConfirmedAt);
  const created = time(f.createdAt);
  const confirmation =
    confirmed !== null ? decay((now - confirmed) / DAY_MS, cfg.eviction_confirmation_half_life_days) : created !== null ? 0.5 * decay((now - created) / DAY_MS, cfg.eviction_confirmation_half_life_days) : 0;
  let access = 0;
  const last = time(usage?.lastAccessedAt);
  if (usage && last !== null && usage.accessHeat > 0) {
    access = Math.min(1, Math.log1p(usage.accessHeat * decay((now - last) / DAY_MS, cfg.eviction_access_half_life_days)) / Math.log(9));
  }
  return cfg.eviction_confidence_weight * confidence + cfg.eviction_confirmation_weight * confirmation + cfg.eviction_access_weight * access;
}

/** Keep at most `max_facts` facts under the configured policy; returns the kept facts (best first) and the evicted ids. */
export function selectForCapacity(facts: MemoryFact[], cfg: MemoryBackendConfig, usage: Map<string, FactUsage> = new Map(), now = Date.now()): { kept: MemoryFact[]; evicted: string[] } {
  if (facts.length <= cfg.max_facts) return { kept: facts, evicted: [] };
  const ranked = facts.map((f, i) => ({ f, i, s: evictionScore(f, cfg, usage.get(f.id), now) })).sort((a, b) => b.s - a.s || a.i - b.i);
  const chosen = new Set<number>();
  if (cfg.fact_eviction_policy === "hybrid-v1") {
    const slots = Math.min(cfg.eviction_correction_reserved_max, Math.ceil(cfg.max_facts * cfg.eviction_correction_reserved_fraction));
    for (const r of ranked.filter((r) => r.f.category.trim().toLowerCase() === "correction").slice(0, slots)) chosen.add(r.i);
  }
  for (const r of ranked) {
    if (chosen.size >= cfg.max_facts) break;
    chosen.add(r.i);
  }
  return { kept: ranked.filter((r) => chosen.has(r.i)).map((r) => r.f), evicted: ranked.filter((r) => !chosen.has(r.i)).map((r) => r.f.id) };
}
