import { z } from "zod";
import { toolMessage } from "../messages";
import type { MessageContent, ToolMessage } from "../messages";
import type { AgentMiddleware, ToolCallRequest, ToolCallResult } from "../runtime/types";
import { agentAllows, bindSkillSecrets, capturedSkills, redactSecrets, shellQuote, skillContaining, skillPathsOfCall, slashActiveSkill } from "../skills";
import type { Skill, SkillLookup } from "../skills";
import { isCommand } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z
  .object({
    registry: z.custom<SkillLookup>((v) => !!v && typeof (v as SkillLookup).list === "function", "registry must provide list(userId)"),
    /** A custom agent's `skills` list (null = all, [] = none). */
    agentSkills: z.array(z.string()).nullish(),
    /** Tools that stay available whatever a skill's `allowed-tools` says. */
    exemptTools: z.array(z.string()).default(["tool_search", "describe_skill"]),
  })
  .strict();

/** Options of {@link createSkillToolPolicyMiddleware}. */
export type SkillToolPolicyOptions = z.input<typeof optionsSchema>;

/** The policy in force for one model or tool call. */
interface Policy {
  /** Allowed tool names, or undefined when no active skill restricts tools. */
  allowed?: Set<string>;
  /** Skills whose `allowed-tools` apply. */
  restrictingSkills: string[];
  /** Secrets bound for the active skill(s). */
  env: Record<string, string>;
  skills: Skill[];
}

function errorMessage(request: ToolCallRequest, text: string): ToolMessage {
  return toolMessage(text, { tool_call_id: request.toolCall.id ?? "", name: request.toolCall.name, status: "error" });
}

function redactContent(content: MessageContent, env: Record<string, string>): MessageContent {
  if (typeof content === "string") return redactSecrets(content, env);
  return content.map((b) => (b && typeof b === "object" && typeof (b as { text?: unknown }).text === "string" ? { ...b, text: redactSecrets((b as { text: string }).text, env) } : b)) as MessageContent;
}

/**
 * DeerFlow's SkillToolPolicyMiddleware (chain #16, wrap_model_call +
 * wrap_tool_call), plus the disabled-skill path refusal every file tool and
 * `bash` share:
 * - a skill's `allowed-tools` applies once the skill is really active: by
 *   `/skill-name` (which dominates for the run) or, otherwise, the union of
 *   skills whose SKILL.md the model read (`skill_context` or a successful
 *   `read_file`). Visible schemas are filtered and calls outside the list
 *   are refused; `tool_search` and `describe_skill` stay available, `task`
 *   is not exempt. A registry failure fails closed to the exempt tools.
 * - any tool call touching `/mnt/skills/…` of a disabled skill (or one the
 *   custom agent may not use) is refused: "Skill 'X' is disabled".
 * - the `required-secrets` of the active skill are taken from the run's
 *   typed `context.secrets` (only declared names), exported for `bash` commands
 *   only, and their values are redacted from every tool result. Secrets of a
 *   skill the model loaded itself are bound only when `secrets-autonomous`
 *   is not false.
 * Best-effort guidance, not a security boundary (the sandbox is).
 */
export function createSkillToolPolicyMiddleware(options: SkillToolPolicyOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("SkillToolPolicyMiddleware", optionsSchema, options);
  const registry = opts.registry as SkillLookup;
  const exempt = new Set(opts.exemptTools);

  const policyFor = async (state: { messages: ToolCallRequest["state"]["messages"]; skill_context?: unknown }, context: ToolCallRequest["runtime"]["context"]): Promise<Policy> => {
    let skills: Skill[];
    try {
      skills = await registry.list(context.identity.userId);
    } catch {
      return { allowed: new Set(), restrictingSkills: ["(skill registry unavailable)"], env: {}, skills: [] };
    }
    const slash = slashActiveSkill(state.messages, skills, opts.agentSkills);
    const active = slash ? [slash] : capturedSkills(state, skills, registry.containerPath).filter((s) => s.enabled);
    const restricting = active.filter((s) => s.allowedTools !== undefined);
    const allowed = restricting.length ? new Set(restricting.flatMap((s) => s.allowedTools ?? [])) : undefined;
    const env: Record<string, string> = {};
    for (const s of active) {
      if (!slash && !s.secretsAutonomous) continue;
      Object.assign(env, bindSkillSecrets(s.requiredSecrets, context.secrets).env);
    }
    return { allowed, restrictingSkills: restricting.map((s) => s.name), env, skills };
  };

  return {
    name: "SkillToolPolicyMiddleware",
    async wrapModelCall(request, handler) {
      const policy = await policyFor(request.state, request.runtime.context);
      const { allowed } = policy;
      if (!allowed) return handler(request);
      return handler({ ...request, tools: request.tools.filter((t) => allowed.has(t.name) || exempt.has(t.name)) });
    },

    async wrapToolCall(request, handler): Promise<ToolCallResult> {
      const policy = await policyFor(request.state, request.runtime.context);
      const call = request.toolCall;
      if (policy.allowed && !policy.allowed.has(call.name) && !exempt.has(call.name)) {
        const list = [...policy.allowed].join(", ") || "none";
        return errorMessage(request, `Error: Tool '${call.name}' is not allowed while skill '${policy.restrictingSkills.join("', '")}' is active (allowed-tools: ${list}).`);
      }
      const args = (call.args ?? {}) as Record<string, unknown>;
      for (const p of skillPathsOfCall(call.name, args, registry.containerPath)) {
        const skill = skillContaining(p, policy.skills, registry.containerPath);
        if (skill && !skill.enabled) {
          return errorMessage(request, `Error: Skill '${skill.name}' is disabled. Its files cannot be used; ask the user to enable it first.`);
        }
        if (skill && !agentAllows(opts.agentSkills, skill.name)) {
          return errorMessage(request, `Error: Skill '${skill.name}' is not available to this agent.`);
        }
      }
      const names = Object.keys(policy.env);
      if (!names.length) return handler(request);
      let next = request;
      if (call.name === "bash" && typeof args.command === "string") {
        const exports = names.map((n) => `${n}=${shellQuote(policy.env[n] ?? "")}`).join(" ");
        next = { ...request, toolCall: { ...call, args: { ...args, command: `export ${exports}\n${args.command}` } } };
      }
      const result = await handler(next);
      if (isCommand(result)) return result;
      return { ...result, content: redactContent(result.content, policy.env) };
    },
  };
}
