import { z } from "zod";
import { escapeXmlText as escape } from "../text";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";
import { agentAllows } from "./activation";
import type { SkillLookup } from "./activation";
import { skillContainerFile } from "./types";
import type { Skill } from "./types";

/** Results of a keyword search (a `select:` list is not capped). */
export const DESCRIBE_SKILL_MAX_RESULTS = 5;

/**
 * Match skills against a `describe_skill` query:
 * - `select:a,b` — exactly these names, in that order (no cap);
 * - `+prefix rest` — names containing the `+` term, ranked by the other terms;
 * - anything else — keywords ranked by hits in the name (weighted) and description.
 * At most {@link DESCRIBE_SKILL_MAX_RESULTS} results unless `select:`.
 */
export function searchSkills(skills: readonly Skill[], query: string): Skill[] {
  const q = query.trim();
  if (q.toLowerCase().startsWith("select:")) {
    const names = q.slice(7).split(",").map((s) => s.trim()).filter(Boolean);
    return names.map((n) => skills.find((s) => s.name === n)).filter((s): s is Skill => !!s);
  }
  const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
  const required = terms.filter((t) => t.startsWith("+") && t.length > 1).map((t) => t.slice(1));
  const rest = terms.filter((t) => !t.startsWith("+"));
  const scored = skills
    .filter((s) => required.every((r) => s.name.includes(r)))
    .map((s) => {
      const name = s.name.toLowerCase();
      const desc = s.description.toLowerCase();
      const score = rest.reduce((acc, t) => acc + (name.includes(t) ? 3 : 0) + (desc.includes(t) ? 1 : 0), required.length ? 1 : 0);
      return { s, score };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || (a.s.name < b.s.name ? -1 : 1));
  return scored.slice(0, DESCRIBE_SKILL_MAX_RESULTS).map((x) => x.s);
}

/** Render matched skills for the model (frontmatter is untrusted: escaped). */
export function renderSkillMetadata(skills: readonly Skill[], containerPath: string): string {
  return skills
    .map((s) => {
      const kind = s.category === "custom" ? "[custom, editable]" : "[built-in]";
      const tools = s.allowedTools?.length ? s.allowedTools.join(", ") : "(all)";
      return `## Skill: ${escape(s.name)}\n- Description: ${escape(s.description)} ${kind}\n- Allowed tools: ${escape(tools)}\n- Location: ${escape(skillContainerFile(s, containerPath))}`;
    })
    .join("\n\n");
}

const schema = z.object({
  name: z.string().min(1).describe('A query: "select:data-analysis,deep-research" for exact names, keywords ("chart visualization"), or "+podcast gen" to require a name term.'),
});

/**
 * `describe_skill(name)` for deferred skill discovery (`skills.deferred_discovery`):
 * the prompt lists only skill names in `<skill_index>`; this returns the
 * description, allowed tools and SKILL.md location of matching enabled
 * skills so the model can decide what to read.
 */
export function createDescribeSkillTool(options: { registry: SkillLookup; agentSkills?: readonly string[] | null }): ToolDefinition<z.output<typeof schema>> {
  return tool({
    name: "describe_skill",
    description:
      "Fetch usage metadata for installed skills listed by name in <skill_index>, so you can decide whether to load one. " +
      'Query forms: "select:a,b" (exact names, no cap), keywords (best 5 matches), "+term rest" (name must contain term).',
    schema,
    execute: async ({ name }, runtime) => {
      const visible = (await options.registry.list(runtime.context.identity.userId)).filter((s) => s.enabled && agentAllows(options.agentSkills, s.name));
      const matched = searchSkills(visible, name);
      return matched.length ? renderSkillMetadata(matched, options.registry.containerPath) : `No skills matched: ${name}`;
    },
  });
}
