import path from "node:path";
import { contentText } from "../messages";
import type { Message } from "../messages";
import { parseSlashSkill } from "./slash";
import { SKILL_MD_FILE, skillContainerDir, skillContainerFile } from "./types";
import type { Skill } from "./types";

/** What the skill middlewares need from a registry. */
export interface SkillLookup {
  readonly containerPath: string;
  /** Every skill the user can see, with enabled flags. */
  list(userId: string): Promise<Skill[]>;
}

const BOUNDARY_BEGIN = "--- BEGIN USER INPUT ---";

/** Text of the latest message the user actually typed (hidden/injected messages skipped). */
export function latestUserText(messages: readonly Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || m.type !== "human" || m.additional_kwargs?.hide_from_ui || m.name === "summary") continue;
    const original = m.additional_kwargs?.original_user_content;
    const text = typeof original === "string" ? original : contentText(m.content);
    return text.startsWith(BOUNDARY_BEGIN) ? text.slice(BOUNDARY_BEGIN.length).replace(/^\s+/, "") : text;
  }
  return undefined;
}

/** Whether an agent's `skills` list admits a skill (`null`/undefined = all, `[]` = none). */
export function agentAllows(agentSkills: readonly string[] | null | undefined, name: string): boolean {
  return agentSkills == null || agentSkills.includes(name);
}

/** The enabled, allowed skill the latest user message activates with `/name`, if any. */
export function slashActiveSkill(messages: readonly Message[], skills: readonly Skill[], agentSkills?: readonly string[] | null): Skill | undefined {
  const text = latestUserText(messages);
  const slash = text === undefined ? undefined : parseSlashSkill(text);
  if (!slash) return undefined;
  const candidates = skills.filter((s) => s.name === slash.name && s.enabled && agentAllows(agentSkills, s.name));
  // A user's custom skill shadows a public one of the same name.
  return candidates.find((s) => s.category === "custom") ?? candidates[0];
}

/** The skill whose SKILL.md is at `virtualPath`, if any. */
export function skillForFile(virtualPath: string, skills: readonly Skill[], containerPath: string): Skill | undefined {
  const p = path.posix.normalize(virtualPath);
  if (path.posix.basename(p) !== SKILL_MD_FILE) return undefined;
  return skills.find((s) => skillContainerFile(s, containerPath) === p);
}

/**
 * Skills the model loaded itself: `skill_context` entries of the state plus
 * successful `read_file` calls on a SKILL.md under the container path.
 */
export function capturedSkills(state: { messages: readonly Message[]; skill_context?: unknown }, skills: readonly Skill[], containerPath: string): Skill[] {
  const found = new Map<string, Skill>();
  const entries = Array.isArray(state.skill_context) ? (state.skill_context as Array<{ path?: unknown }>) : [];
  for (const e of entries) {
    const s = typeof e?.path === "string" ? skillForFile(e.path, skills, containerPath) : undefined;
    if (s) found.set(s.skillFile, s);
  }
  const failed = new Set<string>();
  for (const m of state.messages) if (m.type === "tool" && m.status === "error") failed.add(m.tool_call_id);
  for (const m of state.messages) {
    if (m.type !== "ai") continue;
    for (const call of m.tool_calls) {
      if (call.name !== "read_file" || (call.id && failed.has(call.id))) continue;
      const p = (call.args as { path?: unknown }).path;
      const s = typeof p === "string" ? skillForFile(p, skills, containerPath) : undefined;
      if (s) found.set(s.skillFile, s);
    }
  }
  return [...found.values()];
}

/** The skill whose package contains `virtualPath` (longest container dir wins). */
export function skillContaining(virtualPath: string, skills: readonly Skill[], containerPath: string): Skill | undefined {
  const p = path.posix.normalize(virtualPath);
  let best: { skill: Skill; len: number } | undefined;
  for (const s of skills) {
    const dir = skillContainerDir(s, containerPath);
    if ((p === dir || p.startsWith(`${dir}/`)) && (!best || dir.length > best.len)) best = { skill: s, len: dir.length };
  }
  return best?.skill;
}

const PATH_ARGS = ["path", "file_path", "directory"];

/** Container paths a tool call touches: path arguments of file tools, absolute skill paths inside a bash command. */
export function skillPathsOfCall(toolName: string, args: Record<string, unknown>, containerPath: string): string[] {
  const out: string[] = [];
  for (const key of PATH_ARGS) {
    const v = args[key];
    if (typeof v === "string" && (v === containerPath || v.startsWith(`${containerPath}/`))) out.push(v);
  }
  if (toolName === "bash" && typeof args.command === "string") {
    const re = new RegExp(`${containerPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:/[^\\s'"\`;|&<>()$]*)?`, "g");
    for (const m of args.command.matchAll(re)) out.push(m[0]);
  }
  return out;
}
