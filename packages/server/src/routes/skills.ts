import { resolveArtifact, SkillAlreadyExistsError, SkillError, SkillInstallError, SkillNotFoundError, SkillRegistry, SkillValidationError, threadPaths } from "@deerflow-ts/harness";
import type { Skill } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { requireAdmin, userOf } from "../auth";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { HttpError, threadNotFound } from "../http-error";
import { checkThreadId, readJson } from "../validate";
import { isOwnedByCaller } from "./thread-access";

/** The 403 text of the admin-only skill routes (DeerFlow's). */
export const SKILLS_ADMIN_REQUIRED = "Admin privileges required to manage skills.";

/** DeerFlow's `SkillResponse`. */
export interface SkillResponse {
  name: string;
  description: string;
  license: string | null;
  category: Skill["category"];
  enabled: boolean;
  /** True only for the user's own custom skills (they can be deleted). */
  editable: boolean;
}

function toResponse(s: Skill): SkillResponse {
  return { name: s.name, description: s.description, license: s.license, category: s.category, enabled: s.enabled, editable: s.category === "custom" };
}

const updateSchema = z.object({ enabled: z.boolean() });
const installSchema = z.object({ thread_id: z.string(), path: z.string().min(1) });

/** Map skill errors to DeerFlow's statuses (404 / 409 / 400 with scan findings or content-review reasons). */
function toHttp(err: unknown): never {
  if (err instanceof SkillNotFoundError) throw new HttpError(404, err.message);
  if (err instanceof SkillAlreadyExistsError) throw new HttpError(409, err.message);
  if (err instanceof SkillInstallError) {
    if (err.details.status === 404) throw new HttpError(404, err.message);
    if (Array.isArray(err.details.findings)) throw new HttpError(400, { message: err.message, findings: err.details.findings, skill_name: err.details.skill_name ?? null });
    if (Array.isArray(err.details.reasons)) throw new HttpError(400, { message: err.message, reasons: err.details.reasons, skill_name: err.details.skill_name ?? null });
    throw new HttpError(400, err.message);
  }
  if (err instanceof SkillValidationError) throw new HttpError(400, err.message);
  if (err instanceof SkillError) throw new HttpError(400, err.message);
  throw err;
}

/**
 * The skill registry of the gateway: the runtime's own when it carries one,
 * else one built from the runtime's config (`skills.path`, the extensions
 * file) and data dir, so the routes work for embedded gateways too.
 */
function registryResolver(ctx: GatewayContext): () => SkillRegistry {
  let fallback: { key: unknown; registry: SkillRegistry } | undefined;
  return () => {
    if (ctx.options.skills) return ctx.options.skills;
    const own = ctx.runtime.extensions.skills;
    if (own) return own;
    const config = ctx.runtime.config();
    if (fallback && fallback.key === config) return fallback.registry;
    const loaded = ctx.runtime.configManager ? safeLoaded(ctx) : undefined;
    const registry = config
      ? SkillRegistry.fromConfig(config, { dataDir: ctx.runtime.dataDir, extensionsPath: loaded?.extensionsPath ?? null, projectRoot: loaded ? dirOf(loaded.path) : undefined })
      : new SkillRegistry({ skillsPath: `${process.env.DEER_FLOW_SKILLS_PATH ?? `${process.cwd()}/skills`}`, dataDir: ctx.runtime.dataDir, projectRoot: process.cwd() });
    fallback = { key: config, registry };
    return registry;
  };
}

function safeLoaded(ctx: GatewayContext): { path: string; extensionsPath: string | null } | undefined {
  try {
    return ctx.runtime.configManager?.getLoaded();
  } catch {
    return undefined;
  }
}

function dirOf(file: string): string | undefined {
  return file.startsWith("/") ? file.replace(/\/[^/]*$/, "") || "/" : undefined;
}

/**
 * DeerFlow's skills router: list, read, enable/disable, install a `.skill`
 * package from a thread's files, delete custom skills. Public skill states
 * live in `extensions_config.json` (global); custom ones per user, each user
 * seeing only their own. As in DeerFlow, install, reload, reading and
 * deleting a custom skill through `/skills/custom/{name}` and toggling a
 * public skill are admin-only (403); toggling one's own custom skill is not.
 */
export function registerSkillRoutes(app: Hono, ctx: GatewayContext): void {
  const registry = registryResolver(ctx);
  const user = (c: Context) => userOf(c).id;
  // Public skills and their states are shared by every user: changing them is an admin's job (as in DeerFlow).
  const admin = (c: Context) => requireAdmin(c, SKILLS_ADMIN_REQUIRED);

  app.get("/skills", async (c) => c.json({ skills: (await registry().list(user(c))).map(toResponse) }));

  app.post("/skills/reload", (c) => {
    admin(c);
    return c.json({ success: true, scope: "process", message: "Skills are re-read on every request; nothing was cached." });
  });

  app.post("/skills/install", async (c) => {
    admin(c);
    const body = await readJson(c, installSchema, ctx.options.maxBodyBytes);
    const threadId = checkThreadId(body.thread_id, ["body", "thread_id"]);
    if (!/\.skill$/i.test(body.path)) throw new HttpError(400, "File must have .skill extension");
    // the archive is read from the caller's own folder of one of the caller's threads
    const row = await ctx.stores.threads.get(threadId);
    if (row && !isOwnedByCaller(ctx, c, row.userId)) throw threadNotFound(threadId);
    const artifact = await resolveArtifact(threadPaths(ctx.options.baseDir, user(c), threadId), body.path.startsWith("/") ? body.path : `/${body.path}`);
    try {
      const res = await registry().install(artifact.hostPath, user(c));
      return c.json({ success: res.success, skill_name: res.skill_name, message: res.message });
    } catch (err) {
      return toHttp(err);
    }
  });

  app.get("/skills/custom", async (c) => c.json({ skills: (await registry().list(user(c))).filter((s) => s.category === "custom").map(toResponse) }));

  app.get("/skills/custom/:name", async (c) => {
    admin(c);
    const s = (await registry().list(user(c))).find((x) => x.name === c.req.param("name") && x.category === "custom");
    if (!s) throw new HttpError(404, `Custom skill '${c.req.param("name")}' not found`);
    return c.json({ ...toResponse(s), content: await registry().readContent(s.name, user(c)) });
  });

  app.delete("/skills/custom/:name", async (c) => {
    admin(c);
    try {
      await registry().deleteCustom(c.req.param("name"), user(c));
    } catch (err) {
      return toHttp(err);
    }
    return c.json({ success: true });
  });

  app.get("/skills/:name", async (c) => {
    const s = await registry().get(c.req.param("name"), user(c));
    if (!s) throw new HttpError(404, `Skill '${c.req.param("name")}' not found`);
    return c.json(toResponse(s));
  });

  // Not in DeerFlow's router: the web UI's "view SKILL.md" for every category.
  app.get("/skills/:name/content", async (c) => {
    try {
      const name = c.req.param("name");
      return c.json({ name, content: await registry().readContent(name, user(c)) });
    } catch (err) {
      return toHttp(err);
    }
  });

  app.put("/skills/:name", async (c) => {
    const body = await readJson(c, updateSchema, ctx.options.maxBodyBytes);
    const name = c.req.param("name").replace(/[\r\n]/g, "");
    // a public skill's state is global (extensions_config.json); a custom or legacy one's is the caller's own
    const target = await registry().get(name, user(c));
    if (!target) throw new HttpError(404, `Skill '${name}' not found`);
    if (target.category === "public") admin(c);
    try {
      return c.json(toResponse(await registry().setEnabled(name, body.enabled, user(c))));
    } catch (err) {
      return toHttp(err);
    }
  });
}
