import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadAppConfig, silentConfigLogger } from "@deerflow-ts/harness/config";
import { ConfigError } from "@deerflow-ts/harness/errors";
import { openPgPool } from "@deerflow-ts/harness/postgres";
import { packSkillFolder, PostgresUserSkillStates, resolveSkillsPath, SkillRegistry } from "@deerflow-ts/harness/skills";
import type pg from "pg";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { CommonOptions } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow skills`. */
export const SKILLS_HELP = `Usage: deerflow skills <list|show|install|enable|disable|delete> [args] [options]

Manage skills (SKILL.md packages under skills.path and your custom skills).

  list                       every skill with category and state
  show NAME                  print a skill's SKILL.md
  install FILE.skill | DIR   install a .skill archive or a skill folder as a custom skill
                             (same checks as the gateway: paths, symlinks, executables,
                             size limits, nested SKILL.md, duplicate names, static scan)
  enable NAME / disable NAME public skills: extensions_config.json; custom: per user
  delete NAME                remove one of your custom skills

Options:
  --user ID          whose custom skills (default: default)
  --json             machine-readable output (list)
${COMMON_HELP}`;

/**
 * The registry for this working directory: from config.yaml when there is one, else `./skills`.
 * On `database.backend: postgres` users' skill states are the server's table (`pool` given): the
 * per-user files would be state the server never reads.
 */
export function cliSkillRegistry(common: CommonOptions, pool?: pg.Pool): SkillRegistry {
  try {
    const loaded = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger });
    const userStates = pool ? new PostgresUserSkillStates(pool) : undefined;
    return SkillRegistry.fromConfig(loaded.config, { dataDir: common.dataDir, extensionsPath: loaded.extensionsPath, projectRoot: path.dirname(loaded.path), userStates });
  } catch (err) {
    if (common.configPath || !(err instanceof ConfigError) || err.code !== "config_not_found") throw err;
    // no config: ./skills when there is one, else the skills bundled with the package (as with a config)
    return new SkillRegistry({ skillsPath: resolveSkillsPath(null, common.cwd), dataDir: common.dataDir, projectRoot: common.cwd });
  }
}

/** Pack a skill folder into a temp `.skill` so it goes through the archive checks. */
async function zipFolder(dir: string): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "deerflow-skill-"));
  const file = path.join(tmp, `${path.basename(dir)}.skill`);
  await writeFile(file, await packSkillFolder(dir));
  return file;
}

/** `deerflow skills …`. */
export async function skillsCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand("skills", argv, { user: { type: "string" }, json: { type: "boolean" } }, true);
  const [sub, arg] = positionals;
  if (values.help || !sub) {
    term.line(SKILLS_HELP);
    return values.help ? 0 : 2;
  }
  const common = commonOptions(values);
  const pool = await postgresPool(common);
  try {
    return await skillsSubcommand(sub, arg, values, cliSkillRegistry(common, pool), term);
  } finally {
    await pool?.end();
  }
}

/** The pool of `database.backend: postgres` in the config of this directory (none otherwise, or without a readable config). */
async function postgresPool(common: CommonOptions): Promise<pg.Pool | undefined> {
  let database: { backend?: string; postgres_url?: string | null; postgres_schema?: string | null } | null | undefined;
  try {
    database = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger }).config.database;
  } catch {
    return undefined;
  }
  const url = database?.backend === "postgres" ? database.postgres_url?.trim() : undefined;
  return url ? openPgPool({ url, schema: database?.postgres_schema, max: 2, log: (m) => console.error(`[deerflow] ${m}`) }) : undefined;
}

async function skillsSubcommand(sub: string, arg: string | undefined, values: { user?: string; json?: boolean }, registry: SkillRegistry, term: Terminal): Promise<number> {
  const user = values.user ?? "default";
  const need = (what: string): string => {
    if (!arg) throw new UsageError(`${sub} needs ${what}`, "skills");
    return arg;
  };
  switch (sub) {
    case "list": {
      const skills = await registry.list(user);
      if (values.json) {
        term.line(JSON.stringify({ skills: skills.map((s) => ({ name: s.name, description: s.description, license: s.license, category: s.category, enabled: s.enabled, editable: s.category === "custom" })) }));
        return 0;
      }
      if (!skills.length) term.line(`No skills found under ${registry.skillsPath}.`);
      const width = Math.max(4, ...skills.map((s) => s.name.length));
      for (const s of skills) term.line(`${s.name.padEnd(width)}  ${s.category.padEnd(6)}  ${s.enabled ? "enabled " : "disabled"}  ${s.description.length > 70 ? `${s.description.slice(0, 69)}…` : s.description}`);
      for (const p of registry.problems().filter((x) => x.severity === "error")) term.error(`warning: ${p.message}`);
      return 0;
    }
    case "show":
      term.line(await registry.readContent(need("a skill name"), user));
      return 0;
    case "install": {
      const target = path.resolve(need("a .skill file or a skill folder"));
      const st = await stat(target).catch(() => null);
      if (!st) throw new UsageError(`${target} does not exist`, "skills");
      const archive = st.isDirectory() ? await zipFolder(target) : target;
      try {
        const res = await registry.install(archive, user);
        term.line(res.message);
        for (const f of res.findings) term.line(`  note: ${f.rule_id} (${f.severity}) at ${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`);
      } finally {
        if (archive !== target) await rm(path.dirname(archive), { recursive: true, force: true });
      }
      return 0;
    }
    case "enable":
    case "disable": {
      const s = await registry.setEnabled(need("a skill name"), sub === "enable", user);
      term.line(`Skill '${s.name}' (${s.category}) is now ${s.enabled ? "enabled" : "disabled"}.`);
      return 0;
    }
    case "delete":
      await registry.deleteCustom(need("a skill name"), user);
      term.line(`Deleted custom skill '${arg}'.`);
      return 0;
    default:
      throw new UsageError(`unknown subcommand '${sub}' (expected: list, show, install, enable, disable, delete)`, "skills");
  }
}
