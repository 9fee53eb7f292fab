/**
 * The sign-in part of `deerflow init`: the `auth:` section it writes, the
 * session secret it generates into `.env`, and the first admin.
 */
import { randomBytes } from "node:crypto";
import { UsageError } from "../common";
import type { LineInput, Terminal } from "../io";
import { readNewPassword } from "../password-input";
import { AccountRefusedError, checkEmail, loadUserAdmin } from "../user-admin";

/** The `.env` variable holding the session-signing secret. */
export const JWT_SECRET_VAR = "DEER_FLOW_JWT_SECRET";

/** The default URL of `deerflow serve` (its first-run page is `/setup`). */
export const DEFAULT_SERVE_URL = "http://127.0.0.1:2026";

/** The question, and the one line that explains the default. */
export const AUTH_QUESTION = "Require sign-in (users and passwords)? (yes | no)";
export const AUTH_EXPLANATION =
  "Without sign-in, everyone who can reach the server acts as its one local admin: fine while it listens only on this machine (127.0.0.1, the default). " +
  "Say yes to share it with other people or machines.";

/** The `auth:` lines of config.yaml (the secret itself stays in `.env`). */
export function renderAuthSection(): string[] {
  return [
    "",
    "# Sign-in: accounts (`deerflow users …`, or the /setup page for the first admin) and session cookies.",
    `# The secret that signs the sessions lives in .env (${JWT_SECRET_VAR}); changing it signs everyone out.`,
    "auth:",
    "  enabled: true",
    `  jwt_secret: $${JWT_SECRET_VAR}`,
  ];
}

/** A new session secret: 48 random bytes, base64url (64 characters). */
export function generateJwtSecret(): string {
  return randomBytes(48).toString("base64url");
}

/** Whether `.env` text assigns `key` (a non-empty value; `export KEY=` counts). */
export function dotEnvHasValue(text: string, key: string): boolean {
  return text.split("\n").some((l) => {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(l);
    return !!m && m[1] === key && m[2].replace(/^["']|["']$/g, "").trim() !== "";
  });
}

/** Parse a yes/no answer (`--auth`/`--no-auth` arrive as yes/no). */
export function yesNo(answer: string, what: string): boolean {
  const a = answer.trim().toLowerCase();
  if (["y", "yes", "on", "true"].includes(a)) return true;
  if (["n", "no", "off", "false"].includes(a)) return false;
  throw new UsageError(`${what}: answer yes or no, got '${answer}'`, "init");
}

/** How `init` asks its questions (flags, --yes, stdin lines or the terminal). */
export interface InitAsk {
  (question: string, def: string | undefined, flag: string | undefined): Promise<string>;
}

/**
 * Offer to create the first admin of `dataDir` (email, then a hidden
 * password asked twice on a terminal, or the next stdin line otherwise).
 * Returns what to tell the user next. Closes `input` before a hidden prompt:
 * the prompt needs the terminal to itself, and it is the last question.
 */
export async function offerFirstAdmin(opts: {
  dataDir: string;
  term: Terminal;
  input: LineInput;
  ask: InitAsk;
  /** `--admin-email`: create this admin without asking whether to. */
  adminEmail?: string;
  /** `--yes`: accept defaults (no admin is created without `--admin-email`). */
  yes: boolean;
  setupUrl: string;
}): Promise<void> {
  const { term } = opts;
  const admin = await loadUserAdmin(opts.dataDir);
  try {
    const existing = (await admin.list()).filter((u) => u.systemRole === "admin");
    if (existing.length) {
      term.line(`An admin already exists (${existing[0].email}); sign in as them, or add more with \`deerflow users add EMAIL --admin\`.`);
      return;
    }
    const create = opts.adminEmail !== undefined || (!opts.yes && yesNo(await opts.ask("Create the first admin now? (yes | no)", "yes", undefined), "Create the first admin"));
    if (!create) {
      term.line(`No admin yet: after \`deerflow serve\`, open ${opts.setupUrl} to create the first one (or run \`deerflow users add EMAIL --admin\`).`);
      return;
    }
    const email = checkEmail(await opts.ask("Admin email", undefined, opts.adminEmail));
    let password: string;
    if (process.stdin.isTTY) {
      opts.input.close();
      password = await readNewPassword({ command: "init", fromStdin: false, label: `Password for ${email}`, rule: admin.passwordProblem });
    } else {
      // scripted init: one stdin line per question, this one included (never an argument: ps shows those)
      const line = await opts.input.ask(`Password for ${email} (one stdin line): `);
      if (line === undefined) throw new UsageError(`no password for ${email} on stdin (it is the line after the last answer).`, "init");
      const problem = admin.passwordProblem(line);
      if (problem) throw new UsageError(problem, "init");
      password = line;
    }
    const user = await admin.create({ email, password, systemRole: "admin" });
    term.line(`Created the admin ${user.email} (accounts live in ${opts.dataDir}).`);
  } catch (err) {
    if (err instanceof AccountRefusedError) throw new UsageError(err.message, "init");
    throw err;
  } finally {
    await admin.close();
  }
}
