import fs from "node:fs";
import path from "node:path";
import { FileAgentStore, hasErrorCode, normalizeAgentName, unmanagedAgentFields, validateId } from "@deerflow-ts/harness";
import type { AgentStore, CustomAgentConfig, CustomAgentDocument } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { userOf } from "../auth";
import { z } from "zod";
import { appSettings } from "../app-settings";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";

const modelSettings = z.object({ temperature: z.number().nullish(), max_tokens: z.number().int().nullish() }).strict();
const effort = z.enum(["low", "medium", "high"]);
// Written into the agent's config.yaml, which is read back under the bounded YAML limits: keep it small.
const nameList = z.array(z.string().max(256)).max(500).nullish();

const createSchema = z.object({
  name: z.string(),
  description: z.string().max(65536).default(""),
  model: z.string().max(256).nullish(),
  tool_groups: nameList,
  skills: nameList,
  model_settings: modelSettings.nullish(),
  thinking_enabled: z.boolean().nullish(),
  reasoning_effort: effort.nullish(),
  soul: z.string().default(""),
});

const updateSchema = z.object({
  description: z.string().max(65536).nullish(),
  model: z.string().max(256).nullish(),
  tool_groups: nameList,
  skills: nameList,
  model_settings: modelSettings.nullish(),
  thinking_enabled: z.boolean().nullish(),
  reasoning_effort: effort.nullish(),
  soul: z.string().nullish(),
});

const profileSchema = z.object({ content: z.string().default("") });

/** Model-behaviour fields: on update an omitted one is kept, an explicit null clears it. */
const MODEL_FIELDS = ["model", "model_settings", "thinking_enabled", "reasoning_effort"] as const;

/** DeerFlow's `AgentResponse`. */
function agentResponse(a: CustomAgentConfig): Record<string, unknown> {
  return {
    name: a.name,
    description: a.description ?? "",
    model: a.model ?? null,
    tool_groups: a.tool_groups ?? null,
    skills: a.skills ?? null,
    model_settings: a.model_settings ?? null,
    thinking_enabled: a.thinking_enabled ?? null,
    reasoning_effort: a.reasoning_effort ?? null,
    soul: a.soul ?? "",
  };
}

function checkName(name: string): string {
  try {
    return normalizeAgentName(name);
  } catch (err) {
    throw new HttpError(422, (err as Error).message);
  }
}

function withoutNulls<T extends Record<string, unknown>>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== null && v !== undefined)) as T;
}

/**
 * Custom agents CRUD and the user profile (`/agents`, `/user-profile`). Every route answers 403
 * unless `agents_api.enabled`: they rewrite agent souls, which belongs behind
 * an authenticated admin boundary.
 */
export function registerAgentRoutes(app: Hono, ctx: GatewayContext): void {
  const base = () => ctx.options.baseDir;
  // The file store is rooted at the gateway's base dir (which may differ from the runtime's data dir); a
  // database store is the runtime's, shared with the lead agent factory and the agent tools.
  const fileStore = new FileAgentStore(base());
  const store = (): AgentStore => (ctx.runtime.agentStore.kind === "file" ? fileStore : ctx.runtime.agentStore);
  const user = (c: Context) => userOf(c).id;
  const max = ctx.options.maxBodyBytes;
  const requireEnabled = () => {
    if (!appSettings(ctx).agentsApiEnabled) {
      throw new HttpError(403, "Custom-agent management API is disabled. Set agents_api.enabled=true to expose agent and user-profile routes over HTTP.");
    }
  };
  const checkModel = (model: string | null | undefined) => {
    // without configured models (a bare setup) there is nothing to check against
    const models = appSettings(ctx).models;
    if (!model || !models.length) return;
    if (!models.some((m) => m.name === model)) {
      throw new HttpError(422, `Unknown model '${model}'. Use a model name defined under \`models:\` in config.yaml.`);
    }
  };
  const load = async (c: Context, name: string) => {
    try {
      return await store().get(user(c), name);
    } catch (err) {
      if (hasErrorCode(err, "agent_not_found")) throw new HttpError(404, `Agent '${name}' not found`);
      throw err;
    }
  };
  const legacyConflict = (c: Context, name: string, what: string) =>
    new HttpError(409, `Agent '${name}' only exists in the legacy shared layout and is not scoped to a user. Move it under users/${user(c)}/agents before ${what}.`);

  app.get("/agents", async (c) => {
    requireEnabled();
    return c.json({ agents: (await store().list(user(c), ctx.options.log)).map(agentResponse) });
  });

  app.get("/agents/check", async (c) => {
    requireEnabled();
    const name = checkName(c.req.query("name") ?? "");
    return c.json({ available: !(await store().exists(user(c), name)), name });
  });

  app.get("/agents/:name", async (c) => {
    requireEnabled();
    return c.json(agentResponse(await load(c, checkName(c.req.param("name")))));
  });

  app.post("/agents", async (c) => {
    requireEnabled();
    const body = await readJson(c, createSchema, max);
    const name = checkName(body.name);
    checkModel(body.model);
    const doc: CustomAgentDocument = withoutNulls({
      name,
      description: body.description || undefined,
      tool_groups: body.tool_groups,
      skills: body.skills,
      model: body.model || undefined,
      model_settings: body.model_settings ? withoutNulls(body.model_settings) : undefined,
      thinking_enabled: body.thinking_enabled,
      reasoning_effort: body.reasoning_effort,
    });
    try {
      return c.json(agentResponse(await store().create(user(c), doc, body.soul)), 201);
    } catch (err) {
      if (hasErrorCode(err, "agent_exists")) throw new HttpError(409, `Agent '${name}' already exists`);
      throw err;
    }
  });

  app.put("/agents/:name", async (c) => {
    requireEnabled();
    const name = checkName(c.req.param("name"));
    const body = await readJson(c, updateSchema, max);
    const existing = await load(c, name);
    if (await store().isLegacyOnly(user(c), name)) throw legacyConflict(c, name, "updating");
    const has = (k: keyof typeof body) => Object.prototype.hasOwnProperty.call(body, k);
    if (has("model")) checkModel(body.model);
    const configChanged = (["description", "tool_groups", "skills", ...MODEL_FIELDS] as const).some(has);
    let doc: CustomAgentDocument | null = null;
    if (configChanged) {
      const pick = <K extends keyof typeof body & keyof CustomAgentConfig>(k: K) => (has(k) ? body[k] : existing[k]);
      let settings = pick("model_settings") as Record<string, unknown> | null | undefined;
      // sub-fields of model_settings merge: an omitted one is kept, an explicit null drops it
      if (has("model_settings") && body.model_settings) {
        settings = { ...(existing.model_settings ?? {}) };
        for (const [k, v] of Object.entries(body.model_settings)) {
          if (v === null) delete settings[k];
          else settings[k] = v;
        }
      }
      doc = withoutNulls({
        ...unmanagedAgentFields(existing),
        name,
        description: (has("description") ? body.description : existing.description) ?? "",
        tool_groups: pick("tool_groups"),
        skills: pick("skills"),
        model: pick("model") || undefined,
        model_settings: settings && Object.keys(settings).length ? settings : undefined,
        thinking_enabled: pick("thinking_enabled"),
        reasoning_effort: pick("reasoning_effort"),
      } as CustomAgentDocument);
    }
    const soul = typeof body.soul === "string" ? body.soul : null;
    if (doc || soul !== null) await store().update(user(c), name, doc, soul);
    return c.json(agentResponse(await load(c, name)));
  });

  app.delete("/agents/:name", async (c) => {
    requireEnabled();
    const name = checkName(c.req.param("name"));
    const outcome = await store().delete(user(c), name);
    if (outcome === "legacy") throw legacyConflict(c, name, "deleting");
    if (outcome === "missing") throw new HttpError(404, `Agent '${name}' not found`);
    if (outcome === "not-custom-agent") {
      throw new HttpError(409, `Directory for '${name}' contains memory data but is not a custom agent because config.yaml is missing; it was preserved.`);
    }
    return c.body(null, 204);
  });

  // DeerFlow keeps one USER.md for everybody; here each user has their own. The shared file stays the
  // auth-disabled user's (DeerFlow's layout, what a single-user install already has).
  const profilePath = (c: Context) => (user(c) === ctx.options.userId ? path.join(base(), "USER.md") : path.join(base(), "users", validateId("user", user(c)), "USER.md"));
  app.get("/user-profile", (c) => {
    requireEnabled();
    const p = profilePath(c);
    const text = fs.existsSync(p) ? fs.readFileSync(p, "utf8").trim() : "";
    return c.json({ content: text || null });
  });
  app.put("/user-profile", async (c) => {
    requireEnabled();
    const body = await readJson(c, profileSchema, max);
    const p = profilePath(c);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, body.content, "utf8");
    return c.json({ content: body.content || null });
  });
}
