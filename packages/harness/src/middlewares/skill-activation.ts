import { z } from "zod";
import { humanMessage } from "../messages";
import type { Message } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { readSkillBody, skillContainerDir, skillContainerFile, slashActiveSkill } from "../skills";
import type { Skill, SkillLookup } from "../skills";
import { parseMiddlewareOptions } from "./zod-options";

/** Marker of the hidden activation message (never persisted; rebuilt for every model call of the run). */
export const SKILL_ACTIVATION_KEY = "deerflow_skill_activation";

const optionsSchema = z
  .object({
    registry: z.custom<SkillLookup>((v) => !!v && typeof (v as SkillLookup).list === "function", "registry must provide list(userId)"),
    /** A custom agent's `skills` list (null = all, [] = none). */
    agentSkills: z.array(z.string()).nullish(),
  })
  .strict();

/** Options of {@link createSkillActivationMiddleware}. */
export type SkillActivationOptions = z.input<typeof optionsSchema>;

/** The hidden context that carries an activated skill's instructions. */
export function slashActivationContext(skill: Skill, body: string, containerPath: string): string {
  return [
    "<slash_skill_activation>",
    `The user activated the skill "${skill.name}" with /${skill.name}. Follow its instructions below for this request.`,
    `Its files are under ${skillContainerDir(skill, containerPath)} (SKILL.md: ${skillContainerFile(skill, containerPath)}); read referenced resources with read_file only when needed.`,
    "",
    // Only the closing tag is neutralised: bodies are Markdown with code samples that must stay readable.
    body.replace(/<\/?slash_skill_activation>/g, (t) => t.replace("<", "&lt;")),
    "</slash_skill_activation>",
  ].join("\n");
}

/**
 * DeerFlow's SkillActivationMiddleware (chain #15, wrap_model_call): when
 * the latest real user message starts with `/skill-name`, and that skill is
 * enabled and allowed for this agent, its SKILL.md body is injected as a
 * hidden user-role `<slash_skill_activation>` message just before that
 * message, on every model call of the run (the request only; state is not
 * touched, so the prompt prefix and the stored conversation stay unchanged).
 * The first call of a run emits a `middleware:skill_activation` custom
 * event. Unknown, disabled or reserved names pass through untouched; a
 * registry failure also passes through (activation is a convenience).
 */
export function createSkillActivationMiddleware(options: SkillActivationOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("SkillActivationMiddleware", optionsSchema, options);
  const registry = opts.registry as SkillLookup;
  const announced = new Set<string>();
  return {
    name: "SkillActivationMiddleware",
    async wrapModelCall(request, handler) {
      const uid = request.runtime.context.identity.userId;
      let skill: Skill | undefined;
      let body: string;
      try {
        skill = slashActiveSkill(request.state.messages, await registry.list(uid), opts.agentSkills);
        if (!skill) return handler(request);
        body = await readSkillBody(skill);
      } catch {
        return handler(request);
      }
      const messages: Message[] = [...request.messages];
      let at = messages.length;
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i];
        if (m?.type === "human" && !m.additional_kwargs?.hide_from_ui) {
          at = i;
          break;
        }
      }
      const context = humanMessage(slashActivationContext(skill, body, registry.containerPath), {
        id: `skill-activation-${skill.name}`,
        additional_kwargs: { hide_from_ui: true, [SKILL_ACTIVATION_KEY]: skill.name },
      });
      messages.splice(at, 0, context);
      const key = request.runtime.runId;
      if (!announced.has(key)) {
        announced.add(key);
        if (announced.size > 1024) announced.delete(announced.values().next().value as string);
        request.runtime.writer({ type: "middleware:skill_activation", skill_name: skill.name, category: skill.category, location: skillContainerFile(skill, registry.containerPath) });
      }
      return handler({ ...request, messages });
    },
  };
}
