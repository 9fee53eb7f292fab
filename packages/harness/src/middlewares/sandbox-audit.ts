import { z } from "zod";
import { contentText, toolMessage } from "../messages";
import type { ToolMessage } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { Command, isCommand } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

/** Verdict of {@link auditCommand}. */
export interface AuditVerdict {
  level: "block" | "warn" | "ok";
  reason?: string;
}

interface Rule {
  re: RegExp;
  reason: string;
}

/** High-risk patterns: the command is refused. Applied to the whole command (heredoc bodies removed). */
const BLOCK_RULES: Rule[] = [
  { re: /\bdd\s+[^\n;|&]*\bif=/, reason: "raw device copy with dd" },
  { re: /\bmkfs(\.\w+)?\b/, reason: "formatting a filesystem" },
  { re: /\/etc\/shadow\b/, reason: "access to /etc/shadow" },
  { re: /(>>?|\btee\s+(-a\s+)?)\s*(\/etc\/|\/usr\/bin\/|\/bin\/|\/sbin\/)/, reason: "writing to system directories" },
  { re: /(>>?|\btee\s+(-a\s+)?)\s*(~|\$HOME|\$\{HOME\})\/\.(bashrc|zshrc|profile|bash_profile|bash_login|zprofile)\b/, reason: "modifying shell startup files" },
  { re: /\|\s*(sudo\s+)?(ba|z|da|k|c)?sh\b(?!\S)/, reason: "piping content into a shell" },
  { re: /\bbase64\s+(-d|--decode|-D)\b[^\n]*\|/, reason: "decoding base64 into a pipeline" },
  { re: /\/proc\/[^\s/]+\/environ\b/, reason: "reading process environments" },
  { re: /\bLD_PRELOAD=/, reason: "LD_PRELOAD injection" },
  { re: /\/dev\/(tcp|udp)\//, reason: "raw network access through /dev/tcp" },
  { re: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:/, reason: "fork bomb" },
  { re: /\b(eval|source)\b[^\n]*\$\(/, reason: "eval/source of command substitution" },
  { re: /\b(python3?|perl|ruby|node|php|bash|sh|zsh)\s+-[cerp]\b[^\n]*\$\(/, reason: "interpreter code built from command substitution" },
  { re: /<<<\s*["']?\$\(/, reason: "here-string of command substitution" },
  { re: /(^|[;&|(]\s*)\$\(\s*(curl|wget)\b/m, reason: "executing downloaded content" },
];

/** Medium-risk patterns: the command runs, the result carries a warning. */
const WARN_RULES: Rule[] = [
  { re: /\bchmod\s+(-\S+\s+)*0?777\b/, reason: "chmod 777 makes files world-writable" },
  { re: /\bpip3?\s+install\b/, reason: "installing Python packages" },
  { re: /\bapt(-get)?\s+install\b/, reason: "installing system packages" },
  { re: /(^|[;&|(]\s*)(sudo|su)\b/m, reason: "privilege escalation (sudo/su)" },
  { re: /(^|[\s;&|])PATH=/m, reason: "modifying PATH" },
];

const DANGEROUS_RM_TARGETS = new Set(["/", "/*", "~", "~/", "~/*", "/home", "/home/", "/home/*", "/root", "/root/", "/root/*", "$HOME", "${HOME}"]);

/** Remove heredoc bodies: they are data, not commands. */
export function stripHeredocs(command: string): string {
  const lines = command.split("\n");
  const out: string[] = [];
  let terminator: string | undefined;
  for (const line of lines) {
    if (terminator !== undefined) {
      if (line.trim() === terminator) terminator = undefined;
      continue;
    }
    out.push(line);
    const m = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(line);
    if (m) terminator = m[2];
  }
  return out.join("\n");
}

/** Split a command on `;`, `&&`, `||`, `|` and newlines. */
export function splitCompound(command: string): string[] {
  return command
    .split(/\|\||&&|[;|\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function isDangerousRm(segment: string): boolean {
  const words = segment.split(/\s+/);
  let i = 0;
  while (words[i] === "sudo" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? "")) i++;
  if (words[i] !== "rm") return false;
  const args = words.slice(i + 1);
  const recursive = args.some((a) => a === "--recursive" || /^-[a-zA-Z]*[rR][a-zA-Z]*$/.test(a));
  return recursive && args.some((a) => DANGEROUS_RM_TARGETS.has(a.replace(/^["']|["']$/g, "")));
}

/** Classify a bash command (DeerFlow's SandboxAudit middleware rules). */
export function auditCommand(command: string): AuditVerdict {
  const code = stripHeredocs(command);
  for (const seg of splitCompound(code)) {
    if (isDangerousRm(seg)) return { level: "block", reason: "recursive deletion of the root or a home directory" };
  }
  for (const rule of BLOCK_RULES) if (rule.re.test(code)) return { level: "block", reason: rule.reason };
  for (const rule of WARN_RULES) if (rule.re.test(code)) return { level: "warn", reason: rule.reason };
  return { level: "ok" };
}

const optionsSchema = z
  .object({
    /** Tool names whose `command` argument is audited (default `bash`). */
    tool_names: z.array(z.string().min(1)).default(["bash"]),
  })
  .strict();

/** Options of {@link createSandboxAuditMiddleware}. */
export type SandboxAuditMiddlewareOptions = z.input<typeof optionsSchema>;

function appendWarning(msg: ToolMessage, reason: string): ToolMessage {
  const note = `\n\n[Sandbox audit warning: ${reason}. Make sure this is necessary.]`;
  return { ...msg, content: `${contentText(msg.content)}${note}` };
}

/**
 * SandboxAudit (DeerFlow chain #10): defense in depth for `bash`. High-risk
 * commands are refused with "Command blocked: {reason}. Please use a safer
 * alternative approach."; medium-risk ones run and their result carries a
 * warning. This is pattern matching, not a security boundary — isolation
 * comes from the sandbox provider.
 */
export function createSandboxAuditMiddleware(options: SandboxAuditMiddlewareOptions = {}): AgentMiddleware {
  const opts = parseMiddlewareOptions("SandboxAuditMiddleware", optionsSchema, options);
  const names = new Set(opts.tool_names);
  return {
    name: "SandboxAuditMiddleware",
    async wrapToolCall(request, handler) {
      if (!names.has(request.toolCall.name)) return handler(request);
      const command = request.toolCall.args?.command;
      if (typeof command !== "string") return handler(request);
      const verdict = auditCommand(command);
      if (verdict.level === "block") {
        return toolMessage(`Command blocked: ${verdict.reason}. Please use a safer alternative approach.`, {
          tool_call_id: request.toolCall.id,
          name: request.toolCall.name,
          status: "error",
        });
      }
      const result = await handler(request);
      if (verdict.level !== "warn" || !verdict.reason) return result;
      if (isCommand(result)) {
        const msgs = Array.isArray(result.update.messages) ? result.update.messages : [];
        const next = msgs.map((m) => ((m as ToolMessage)?.type === "tool" ? appendWarning(m as ToolMessage, verdict.reason as string) : m));
        return new Command({ update: { ...result.update, messages: next }, goto: result.goto, resume: result.resume });
      }
      return appendWarning(result as ToolMessage, verdict.reason);
    },
  };
}
