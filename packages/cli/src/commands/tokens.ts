import { TOKEN_SCOPES } from "@deerflow-ts/server";
import type { AccessTokenInfo, TokenScope } from "@deerflow-ts/server";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";
import { AccountRefusedError, authStateNote, emptyUserAdmin, hasAccountStore, loadUserAdmin } from "../user-admin";
import { formatDate, table } from "./users";

/** Help of `deerflow tokens`. */
export const TOKENS_HELP = `Usage: deerflow tokens <subcommand> --user EMAIL [options]

Personal access tokens of an account: scripts, the LangGraph SDK and
RemoteDeerFlowClient send one as \`Authorization: Bearer dfp_…\` and act as that
account, limited to the token's scopes. They live in the same account store as
\`deerflow users\` (auth.db in the data dir, or PostgreSQL's auth_* tables with
database.backend: postgres); the running server sees changes at once.

Subcommands:
  list --user EMAIL [--json]
                     the account's tokens: id, name, scopes, created, last used
                     (never the secrets: they are not stored)
  create NAME --user EMAIL [--scopes read,run,admin] [--json]
                     mint a token and print its secret, this once
  revoke ID --user EMAIL
                     delete one token (ID from \`tokens list\`); requests that
                     send it are refused from then on

Scopes: read (GET and searches), run (also create threads, start, join and
cancel runs, upload), admin (everything the account may do; admin accounts
only). Default: read.

Exit code 0 when done, 1 when refused (unknown email or token id, admin scope
for a user account), 2 for a usage error.

Options:
  --user EMAIL       the account whose tokens these are (required)
  --scopes LIST      (create) comma-separated scopes (default: read)
  --json             (list, create) machine-readable output
${COMMON_HELP}`;

const SUBCOMMANDS = ["list", "create", "revoke"] as const;
type Sub = (typeof SUBCOMMANDS)[number];

/** The longest token name the server takes (the HTTP API's rule). */
const MAX_NAME = 100;

function parseScopes(raw: string | undefined): TokenScope[] {
  if (raw === undefined) return ["read"];
  const scopes = raw.split(",").map((s) => s.trim()).filter(Boolean);
  if (!scopes.length) throw new UsageError(`--scopes needs at least one of ${TOKEN_SCOPES.join(", ")}.`, "tokens");
  for (const s of scopes) {
    if (!(TOKEN_SCOPES as readonly string[]).includes(s)) throw new UsageError(`unknown scope '${s}' in --scopes; use ${TOKEN_SCOPES.join(", ")} (comma-separated).`, "tokens");
  }
  return [...new Set(scopes)] as TokenScope[];
}

/** The one positional a subcommand takes (NAME for create, ID for revoke, none for list). */
function argumentOf(sub: Sub, rest: string[]): string {
  if (sub === "list") {
    if (rest.length) throw new UsageError("tokens list takes no arguments (the account is --user EMAIL).", "tokens");
    return "";
  }
  const what = sub === "create" ? "NAME" : "ID";
  if (rest.length !== 1) throw new UsageError(`tokens ${sub} takes one ${what}, got ${rest.length}. Quote a name with spaces.`, "tokens");
  const arg = rest[0].trim();
  if (!arg) throw new UsageError(`tokens ${sub} needs a non-empty ${what}.`, "tokens");
  if (sub === "create" && arg.length > MAX_NAME) throw new UsageError(`the token name is ${arg.length} characters; at most ${MAX_NAME}.`, "tokens");
  return arg;
}

const json = (t: AccessTokenInfo) => ({ id: t.id, name: t.name, scopes: t.scopes, created_at: t.createdAt, last_used_at: t.lastUsedAt });

/** `deerflow tokens …`. */
export async function tokensCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand("tokens", argv, { user: { type: "string" }, scopes: { type: "string" }, json: { type: "boolean" } }, true);
  const [sub, ...rest] = positionals;
  if (values.help || !sub) {
    term.line(TOKENS_HELP);
    return values.help ? 0 : 2;
  }
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`unknown subcommand '${sub}'; use one of ${SUBCOMMANDS.join(", ")}.`, "tokens");
  const s = sub as Sub;
  if (values.scopes !== undefined && s !== "create") throw new UsageError(`--scopes does not apply to tokens ${s}.`, "tokens");
  if (values.json && s === "revoke") throw new UsageError("--json does not apply to tokens revoke.", "tokens");
  // Usage problems first: nothing is opened for a malformed command.
  const arg = argumentOf(s, rest);
  const scopes = parseScopes(values.scopes);
  const email = values.user?.trim();
  if (!email) throw new UsageError(`tokens ${s} needs --user EMAIL: the account whose tokens these are (\`deerflow users list\` shows the accounts).`, "tokens");
  const common = commonOptions(values);
  // Tokens belong to accounts: a data dir without an account store has none, and nothing is created in it.
  const admin = hasAccountStore(common.dataDir, common) ? await loadUserAdmin(common.dataDir, common) : emptyUserAdmin();
  try {
    const user = await admin.find(email);
    if (!user) return refuse(term, `No account with the email ${email} (\`deerflow users list\` shows them; \`deerflow users add\` creates one).`);
    if (s === "list") {
      const tokens = await admin.listTokens(user.id);
      if (values.json) term.line(JSON.stringify(tokens.map(json), null, 2));
      else if (!tokens.length) term.line(`${user.email} has no access tokens. Create one with \`deerflow tokens create NAME --user ${user.email}\`.`);
      else {
        const [head, ...body] = table([
          ["ID", "NAME", "SCOPES", "CREATED", "LAST USED"],
          ...tokens.map((t) => [t.id, t.name, t.scopes.join(","), formatDate(t.createdAt), t.lastUsedAt ? formatDate(t.lastUsedAt) : "never"]),
        ]);
        term.line(term.style("bold", head));
        for (const line of body) term.line(line);
      }
      return 0;
    }
    if (s === "create") {
      if (scopes.includes("admin") && user.systemRole !== "admin") {
        return refuse(term, `only admin accounts can hold a token with the 'admin' scope, and ${user.email} is a user. Use --scopes read,run, or \`deerflow users set-role ${user.email} admin\` first.`);
      }
      const t = await admin.createToken(user.id, arg, scopes);
      if (values.json) term.line(JSON.stringify({ ...json(t), token: t.secret }, null, 2));
      else {
        term.line(`Created token '${t.name}' (id ${t.id}) for ${user.email}, scopes ${t.scopes.join(", ")}.`);
        term.line("It is shown only now (the server keeps only a hash of it); send it as `Authorization: Bearer <token>`:");
        term.line(t.secret);
      }
      const note = authStateNote(common);
      if (note) term.error(note);
      return 0;
    }
    if (!(await admin.revokeToken(user.id, arg))) return refuse(term, `${user.email} has no token with the id ${arg} (\`deerflow tokens list --user ${user.email}\` shows them).`);
    term.line(`Revoked token ${arg} of ${user.email}; requests that send it are refused from now on.`);
    return 0;
  } catch (err) {
    if (err instanceof AccountRefusedError) return refuse(term, err.message);
    throw err;
  } finally {
    await admin.close();
  }
}

function refuse(term: Terminal, message: string): number {
  term.error(`Refused: ${message}`);
  return 1;
}
