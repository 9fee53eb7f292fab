import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";
import { readNewPassword } from "../password-input";
import { AccountRefusedError, authStateNote, checkEmail, emptyUserAdmin, hasAccountStore, loadUserAdmin } from "../user-admin";
import type { UserAdmin } from "../user-admin";

/** Help of `deerflow users`. */
export const USERS_HELP = `Usage: deerflow users <subcommand> [options]

Manage the accounts that sign in to the gateway: auth.db in the data dir, or
PostgreSQL's auth_* tables with database.backend: postgres (accounts are not
copied when the backend changes). The running server sees changes at once.

Subcommands:
  add EMAIL [--admin] [--password-stdin]
                     create an account (role user, or admin with --admin)
  list [--json]      every account: email, role, created, OIDC provider
  reset-password EMAIL [--password-stdin] [--revoke-tokens]
                     set a new password; every session of the account is signed
                     out at once (--revoke-tokens also deletes its access tokens)
  set-role EMAIL admin|user
                     make an account admin, or a user again (the last admin
                     cannot be demoted)

Passwords are asked twice at a hidden prompt on a terminal, or read as one line
from stdin with --password-stdin. They are never taken as arguments: other
users of the machine can read arguments with ps.

Exit code 0 when done, 1 when refused (unknown or existing email, weak password,
last admin), 2 for a usage error.

Options:
  --admin            (add) create an admin
  --password-stdin   read the password from stdin (one line)
  --revoke-tokens    (reset-password) also delete the account's access tokens
  --json             (list) machine-readable output
${COMMON_HELP}`;

const SUBCOMMANDS = ["add", "list", "reset-password", "set-role"] as const;

/** The one positional EMAIL of a subcommand; a second positional is refused (it could be a password). */
function emailArg(sub: string, rest: string[]): string {
  if (rest.length === 0) throw new UsageError(`users ${sub} needs an EMAIL.`, "users");
  if (rest.length > 1) {
    throw new UsageError(
      `users ${sub} takes one EMAIL, got ${rest.length} arguments. Passwords are never taken as arguments (other users can read them with ps): ` +
        "you are asked for it, or pass --password-stdin and pipe it.",
      "users",
    );
  }
  return rest[0];
}

/** An ISO time as `YYYY-MM-DD HH:MM UTC` (as given when it does not parse). */
export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Rows as aligned columns (the last column is not padded). */
export function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join("  "));
}

/** `deerflow users …`. */
export async function usersCommand(argv: string[], term: Terminal): Promise<number> {
  const { values, positionals } = parseCommand(
    "users",
    argv,
    {
      admin: { type: "boolean" },
      "password-stdin": { type: "boolean" },
      "revoke-tokens": { type: "boolean" },
      json: { type: "boolean" },
    },
    true,
  );
  const [sub, ...rest] = positionals;
  if (values.help || !sub) {
    term.line(USERS_HELP);
    return values.help ? 0 : 2;
  }
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`unknown subcommand '${sub}'; use one of ${SUBCOMMANDS.join(", ")}.`, "users");
  const onlyFor = (flag: keyof typeof values, subs: string[]) => {
    if (values[flag] && !subs.includes(sub)) throw new UsageError(`--${flag} does not apply to users ${sub}.`, "users");
  };
  onlyFor("admin", ["add"]);
  onlyFor("password-stdin", ["add", "reset-password"]);
  onlyFor("revoke-tokens", ["reset-password"]);
  onlyFor("json", ["list"]);
  const common = commonOptions(values);
  // Usage problems first: nothing is opened (or created) for a malformed command.
  if (sub === "list" && rest.length) throw new UsageError("users list takes no arguments.", "users");
  if (sub === "set-role") {
    if (rest.length !== 2 || !["admin", "user"].includes(rest[1])) throw new UsageError("usage: deerflow users set-role EMAIL admin|user", "users");
  }
  const email = sub === "list" ? "" : emailArg(sub, sub === "set-role" ? rest.slice(0, 1) : rest);
  // listing a data dir without accounts must not create auth.db there
  const admin = sub === "list" && !hasAccountStore(common.dataDir, common) ? emptyUserAdmin() : await loadUserAdmin(common.dataDir, common);
  try {
    switch (sub) {
      case "add":
        return await add(admin, term, email, !!values.admin, !!values["password-stdin"], common);
      case "list":
        return await list(admin, term, !!values.json);
      case "reset-password":
        return await resetPassword(admin, term, email, !!values["password-stdin"], !!values["revoke-tokens"]);
      default:
        return await setRole(admin, term, email, rest[1] as "admin" | "user");
    }
  } catch (err) {
    if (err instanceof AccountRefusedError) return refuse(term, err.message);
    throw err;
  } finally {
    await admin.close();
  }
}

async function add(admin: UserAdmin, term: Terminal, email: string, asAdmin: boolean, fromStdin: boolean, common: ReturnType<typeof commonOptions>): Promise<number> {
  checkEmail(email);
  if (await admin.find(email)) return refuse(term, `${email} already has an account. Use \`deerflow users reset-password ${email}\` to give it a new password.`);
  const password = await readNewPassword({ command: "users", fromStdin, label: `Password for ${email}`, rule: admin.passwordProblem });
  const user = await admin.create({ email, password, systemRole: asAdmin ? "admin" : "user" });
  term.line(`Added ${user.systemRole} ${user.email}.`);
  const note = authStateNote(common);
  if (note) term.error(note);
  return 0;
}

async function list(admin: UserAdmin, term: Terminal, json: boolean): Promise<number> {
  const users = await admin.list();
  if (json) {
    term.line(
      JSON.stringify(
        users.map((u) => ({ id: u.id, email: u.email, system_role: u.systemRole, created_at: u.createdAt, oauth_provider: u.oauthProvider, needs_setup: u.needsSetup })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (!users.length) {
    term.line("No accounts yet. Add the first admin with `deerflow users add EMAIL --admin`, or open /setup in the web UI.");
    return 0;
  }
  const rows = [["EMAIL", "ROLE", "CREATED", "OAUTH"], ...users.map((u) => [u.email, u.systemRole, formatDate(u.createdAt), u.oauthProvider ?? "-"])];
  const [head, ...body] = table(rows);
  term.line(term.style("bold", head));
  for (const line of body) term.line(line);
  return 0;
}

async function resetPassword(admin: UserAdmin, term: Terminal, email: string, fromStdin: boolean, revokeTokens: boolean): Promise<number> {
  const user = await admin.find(email);
  if (!user) return refuse(term, `No account with the email ${email} (\`deerflow users list\` shows them).`);
  const password = await readNewPassword({ command: "users", fromStdin, label: `New password for ${user.email}`, rule: admin.passwordProblem });
  await admin.setPassword(user.id, password);
  term.line(`Password of ${user.email} changed; every session it had is signed out.`);
  if (revokeTokens) {
    const n = await admin.revokeTokens(user.id);
    term.line(`Deleted ${n} access token(s) of ${user.email}.`);
  } else {
    const n = await admin.tokenCount(user.id);
    if (n) term.line(`Its ${n} access token(s) still work; add --revoke-tokens to delete them.`);
  }
  return 0;
}

async function setRole(admin: UserAdmin, term: Terminal, email: string, role: "admin" | "user"): Promise<number> {
  const user = await admin.find(email);
  if (!user) return refuse(term, `No account with the email ${email} (\`deerflow users list\` shows them).`);
  if (user.systemRole === role) {
    term.line(`${user.email} is already ${role}.`);
    return 0;
  }
  const result = await admin.setRole(user.id, role);
  if (!result.ok) return refuse(term, result.message);
  term.line(`${user.email} is now ${role}.`);
  return 0;
}

function refuse(term: Terminal, message: string): number {
  term.error(`Refused: ${message}`);
  return 1;
}
