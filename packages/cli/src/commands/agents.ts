import type pg from "pg";
import { importFileAgents, openAgentStore, agentStorageBackend } from "@deerflow-ts/harness/agents/store";
import type { AgentStore } from "@deerflow-ts/harness/agents/store";
import { loadAppConfig, silentConfigLogger } from "@deerflow-ts/harness/config";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { openPgPool } from "@deerflow-ts/harness/postgres";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { CommonOptions } from "../common";
import type { Terminal } from "../io";
import { configuredAuth, hasAccountStore, loadUserAdmin } from "../user-admin";

/** Help of `deerflow agents`. */
export const AGENTS_HELP = `Usage: deerflow agents <list|import> [options]

Custom agents, where agent_storage.backend keeps them: files under the data dir
(file, the default) or rows in the database of database.backend (db).

  list        one user's custom agents (name and description)
  import      copy every user's file agents (users/<id>/agents/<name>/config.yaml
              and SOUL.md) into the database store; the files stay where they
              are. Needs agent_storage.backend: db. Agents already in the
              database are left as they are there, so running it twice imports
              nothing twice.

Exit code 0 when done, 1 when refused (agent_storage.backend is not db),
2 for a usage error.

Options:
  --user ID|EMAIL    (list) whose agents: a user id, or an account's email
                     (default: default, the user when sign-in is off)
  --json             machine-readable output
${COMMON_HELP}`;

const SUBCOMMANDS = ["list", "import"] as const;

/** The config's agent store (and the pool it runs on), opened for one command. */
async function openStore(config: AppConfig, common: CommonOptions): Promise<{ store: AgentStore; close(): Promise<void> }> {
  let pool: pg.Pool | undefined;
  const database = config.database;
  if (agentStorageBackend(config) === "db" && database?.backend === "postgres") {
    const url = database.postgres_url?.trim();
    if (!url) throw new UsageError("database.backend is 'postgres' but database.postgres_url is not set (e.g. postgres_url: $DATABASE_URL).", "agents");
    pool = await openPgPool({ url, schema: database.postgres_schema, max: 2, log: (m) => console.error(`[deerflow] ${m}`) });
  }
  try {
    const store = await openAgentStore(config, { dataDir: common.dataDir, pgPool: pool });
    return {
      store,
      async close() {
        await store.close();
        await pool?.end();
      },
    };
  } catch (err) {
    await pool?.end();
    throw err;
  }
}

/**
 * The user id `agents list` reads: `--user` as given, or the id of the account
 * with that email (with sign-in on, agents belong to accounts, whose ids are
 * not something anyone types); undefined for an email no account has.
 */
async function listedUser(user: string | undefined, common: CommonOptions): Promise<string | undefined> {
  if (user === undefined) return "default";
  if (!user.includes("@")) return user;
  if (!hasAccountStore(common.dataDir, common)) return undefined;
  const admin = await loadUserAdmin(common.dataDir, common);
  try {
    return (await admin.find(user))?.id;
  } finally {
    await admin.close();
  }
}

/** The answer of an empty `agents list`: whose list it was, and with sign-in on, how to name an account. */
function noAgentsLine(user: string, signInOn: boolean, backend: string): string {
  const line = `No custom agents for user '${user}' (agent_storage.backend: ${backend}).`;
  return signInOn ? `${line} With sign-in on, agents belong to accounts: add --user EMAIL.` : line;
}

/** `deerflow agents …`. */
export async function agentsCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand("agents", argv, { user: { type: "string" }, json: { type: "boolean" } }, true);
  const [sub, ...rest] = positionals;
  if (values.help || !sub) {
    term.line(AGENTS_HELP);
    return values.help ? 0 : 2;
  }
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`unknown subcommand '${sub}'; use one of ${SUBCOMMANDS.join(", ")}.`, "agents");
  if (rest.length) throw new UsageError(`agents ${sub} takes no arguments.`, "agents");
  if (values.user !== undefined && sub !== "list") throw new UsageError(`--user does not apply to agents ${sub}.`, "agents");
  const common = commonOptions(values);
  const { config } = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger });
  if (sub === "import" && agentStorageBackend(config) !== "db") {
    term.error("Refused: agent_storage.backend is 'file', so the agents already are files. Set agent_storage.backend: db in config.yaml, then import.");
    return 1;
  }
  const opened = await openStore(config, common);
  try {
    if (sub === "list") {
      const userId = await listedUser(values.user, common);
      if (!userId) {
        term.error(`Refused: no account has the email '${values.user}' (see \`deerflow users list\`).`);
        return 1;
      }
      const agents = await opened.store.list(userId, (m) => term.error(m));
      if (values.json) term.line(JSON.stringify(agents.map((a) => ({ name: a.name, description: a.description ?? "" })), null, 2));
      else if (!agents.length) term.line(noAgentsLine(values.user ?? userId, values.user === undefined && configuredAuth(common).settings?.enabled === true, agentStorageBackend(config)));
      else for (const a of agents) term.line(a.description ? `${a.name}  ${a.description}` : a.name);
      return 0;
    }
    const outcome = await importFileAgents(common.dataDir, opened.store);
    if (values.json) {
      term.line(JSON.stringify({ imported: outcome.imported, existing: outcome.existing, skipped: outcome.skipped }, null, 2));
      return 0;
    }
    for (const a of outcome.imported) term.line(`imported ${a.userId}/${a.name}`);
    for (const a of outcome.existing) term.line(`already in the database: ${a.userId}/${a.name}`);
    for (const a of outcome.skipped) term.error(`skipped ${a.userId ?? "(shared)"}/${a.name}: ${a.reason}`);
    term.line(`Imported ${outcome.imported.length} agent(s) into the ${opened.store.kind} store; ${outcome.existing.length} already there. The files were left in place.`);
    return 0;
  } finally {
    await opened.close();
  }
}
