import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Severity of a finding; only CRITICAL blocks an install. */
export type FindingSeverity = "CRITICAL" | "HIGH" | "MEDIUM";

/** One static-scan finding (DeerFlow's rule ids). */
export interface StaticFinding {
  rule_id: string;
  severity: FindingSeverity;
  message: string;
  /** Path relative to the skill root, or null for the archive itself. */
  file: string | null;
  line: number | null;
  /** Matched text (secret values are never included). */
  evidence: string | null;
}

interface Rule {
  id: string;
  severity: FindingSeverity;
  message: string;
  pattern: RegExp;
  /** Which files the rule applies to (default: every text file). */
  applies?: (rel: string, text: string) => boolean;
  /** Never echo the match (secrets). */
  redact?: boolean;
}

const isPython = (rel: string, text: string) => rel.endsWith(".py") || /^#!.*python/.test(text);
const isShell = (rel: string, text: string) => /\.(sh|bash|zsh)$/.test(rel) || /^#!.*\b(ba|z)?sh\b/.test(text);
/** True for a script or source file of a package (by extension or shebang). */
export const isCode = (rel: string, text: string) => isPython(rel, text) || isShell(rel, text) || /\.(m?js|cjs|ts|rb|pl|php|ps1)$/.test(rel);
const isSkillMd = (rel: string) => rel === "SKILL.md";

// Each rule looks for an unmistakable shape; the goal is to stop obviously
// hostile packages, not to prove a package safe (the LLM review, when a
// moderation model is configured, is the deeper check).
const RULES: Rule[] = [
  { id: "secret-private-key", severity: "CRITICAL", message: "Private key material is embedded in skill content.", pattern: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----/, redact: true },
  {
    id: "secret-cloud-token",
    severity: "CRITICAL",
    message: "High-confidence cloud or API token is embedded in skill content.",
    pattern: /\b(?:AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,})\b/,
    redact: true,
  },
  { id: "python-dynamic-exec", severity: "CRITICAL", message: "Python dynamic code execution primitive is used in a skill file.", pattern: /(?<![.\w])(?:eval|exec)\s*\(\s*(?!["'])/, applies: isPython },
  {
    id: "python-shell-exec",
    severity: "CRITICAL",
    message: "Python shell execution primitive is used in a skill file.",
    pattern: /\bos\.(?:system|popen)\s*\(|\bsubprocess\.[a-z_]+\([^)]*shell\s*=\s*True/,
    applies: isPython,
  },
  {
    id: "shell-reverse-shell",
    severity: "CRITICAL",
    message: "Script contains a reverse-shell idiom.",
    pattern: /\/dev\/tcp\/[\w.-]+\/\d+|\b(?:nc|ncat|netcat)\b[^\n]*\s-e\s|\bbash\s+-i\s*>&|socket\.socket\([^\n]*\)[\s\S]{0,200}dup2/,
    applies: isCode,
  },
  { id: "network-cloud-metadata", severity: "CRITICAL", message: "Skill content references a cloud metadata service.", pattern: /169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200/ },
  { id: "resource-fork-bomb", severity: "CRITICAL", message: "Skill content contains a fork-bomb pattern.", pattern: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  { id: "shell-curl-pipe-shell", severity: "HIGH", message: "Script pipes remote content into a shell.", pattern: /\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b/, applies: isCode },
  { id: "shell-destructive-command", severity: "HIGH", message: "Script contains an unmistakably destructive command.", pattern: /\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+(?:--no-preserve-root\s+)?\/(?:\s|$|\*)|\bmkfs\.\w+\s+\/dev\//, applies: isCode },
  {
    id: "declaration-prompt-override",
    severity: "HIGH",
    message: "SKILL.md contains a prompt override phrase.",
    pattern: /\b(?:ignore|disregard)\s+(?:all\s+)?(?:previous|prior)\s+instructions\b|\boverride\s+(?:the\s+)?(?:system|developer)\s+instructions\b/i,
    applies: (rel) => isSkillMd(rel),
  },
  { id: "declaration-sensitive-path", severity: "HIGH", message: "Skill references sensitive host or credential paths.", pattern: /~\/\.ssh\b|\/etc\/shadow\b|\/var\/run\/docker\.sock/ },
];

/** Files larger than this are not text-scanned (they are still size-limited by the installer). */
const MAX_SCAN_BYTES = 2 * 1024 * 1024;

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Scan one text file of a package (`rel` is relative to the skill root). */
export function scanSkillText(rel: string, text: string): StaticFinding[] {
  const out: StaticFinding[] = [];
  for (const rule of RULES) {
    if (rule.applies && !rule.applies(rel, text)) continue;
    const m = rule.pattern.exec(text);
    if (!m) continue;
    out.push({
      rule_id: rule.id,
      severity: rule.severity,
      message: rule.message,
      file: rel,
      line: lineOf(text, m.index),
      evidence: rule.redact ? "[redacted]" : m[0].slice(0, 120),
    });
  }
  return out;
}

/** Scan every text file under a skill directory. */
export async function scanSkillDir(dir: string): Promise<StaticFinding[]> {
  const findings: StaticFinding[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(childAbs, childRel);
      else if (e.isFile()) {
        const bytes = await readFile(childAbs);
        if (bytes.length > MAX_SCAN_BYTES || bytes.subarray(0, 8192).includes(0)) continue;
        findings.push(...scanSkillText(childRel, bytes.toString("utf8")));
      }
    }
  };
  await walk(dir, "");
  return findings;
}

/** Render findings for an error message. */
export function formatFindings(findings: readonly StaticFinding[]): string {
  return findings.map((f) => `${f.rule_id} (${f.severity}) at ${f.file ?? "<archive>"}${f.line ? `:${f.line}` : ""}: ${f.message}`).join("; ");
}
