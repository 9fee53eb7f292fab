import { z } from "zod";
import { bool, int, num } from "./schema-helpers";
import { ConfigError } from "../errors";

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an http(s) URL")
  .transform((v) => v.replace(/\/+$/, ""));

const optionalString = z.preprocess((v) => (v === null || v === "" ? undefined : v), z.string().optional());

/**
 * The keys a web tool entry may carry (DeerFlow's extras for its community
 * tools plus ours). Unknown keys are kept and ignored, as DeerFlow does.
 */
export const webToolEntrySchema = z.looseObject({
  name: z.string().min(1),
  group: z.string().nullish(),
  use: z.string().min(1),
  api_key: optionalString,
  /** Browserless / Crawl4AI credential (DeerFlow's key for those services). */
  token: optionalString,
  base_url: httpUrl.optional(),
  max_results: int().pipe(z.int().min(1).max(200)).optional(),
  /** Seconds. `timeout_s` is Browserless' spelling. */
  timeout: num().pipe(z.number().positive().max(600)).optional(),
  timeout_s: num().pipe(z.number().positive().max(600)).optional(),
  allow_private_addresses: bool().optional(),
  region: optionalString,
  safesearch: z.preprocess((v) => (typeof v === "string" ? v.trim().toLowerCase() : v), z.enum(["on", "moderate", "off", "strict"]).optional()),
  /** web_fetch output budget in characters (0 = no limit). */
  max_chars: int().pipe(z.int().min(0).max(1_000_000)).optional(),
  /** web_fetch download limit in bytes. */
  max_bytes: int().pipe(z.int().min(1024).max(100 * 1024 * 1024)).optional(),
  search_type: optionalString,
  contents_max_characters: int().pipe(z.int().min(1).max(100_000)).optional(),
  country: optionalString,
  search_lang: optionalString,
  spellcheck: bool().optional(),
  backend: z.union([z.string(), z.array(z.string())]).optional(),
  proxy: optionalString,
  trust_env: bool().optional(),
  filter: optionalString,
});

/** A validated web tool entry. */
export type WebToolEntry = z.output<typeof webToolEntrySchema>;

/** Validate a `tools[index]` entry; the ConfigError names `tools[index].<key>`. */
export function parseWebToolEntry(entry: unknown, index: number): WebToolEntry {
  const r = webToolEntrySchema.safeParse(entry);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const key = `tools[${index}]${issue.path.length ? `.${issue.path.join(".")}` : ""}`;
  const value = issue.path.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[String(k)] : undefined), entry);
  // Never echo a credential back, even an invalid one.
  const shown = /api_key|token/.test(key) ? "[redacted]" : JSON.stringify(value);
  throw new ConfigError(`${key}: ${issue.message}${value !== undefined ? ` (got ${shown})` : ""}`, { details: { key, value: /api_key|token/.test(key) ? undefined : value } });
}
