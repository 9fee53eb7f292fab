import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { AuthError } from "./errors";

/**
 * scrypt cost: N=2^15, r=8, p=1 (32 MiB, ~50-100 ms on one core). The
 * parameters are stored in each hash, so raising them later keeps old hashes
 * verifiable.
 */
const N = 32768;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const PREFIX = "scrypt";

function derive(password: string, salt: Buffer, n: number, r: number, p: number, keyLen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem above 128·N·r so the stored cost is always derivable
    scrypt(password.normalize("NFC"), salt, keyLen, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hash a password: `scrypt$N$r$p$salt$key` (base64url), a fresh 16-byte salt per hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P, KEY_LEN);
  return [PREFIX, N, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Check a password against a stored hash in constant time; a malformed hash never verifies. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== PREFIX) return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4]!, "base64url");
  const expected = Buffer.from(parts[5]!, "base64url");
  if (![n, r, p].every((v) => Number.isInteger(v) && v! > 0) || expected.length < 16 || n! > 1 << 20) return false;
  const key = await derive(password, salt, n!, r!, p!, expected.length);
  return timingSafeEqual(key, expected);
}

let dummy: Promise<string> | undefined;

/**
 * Spend the same work as a real verification when there is no account (or no
 * local password), so an unknown email and a wrong password cannot be told
 * apart by their answer time.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword("deerflow-dummy-password-for-equal-timing");
  await verifyPassword(password, await dummy);
  return false;
}

/** Minimum password length (DeerFlow's). */
export const MIN_PASSWORD_LENGTH = 8;

/**
 * Passwords that satisfy the length rule but are the first guesses of any
 * attacker (checked case-insensitively). A floor, not a breach database.
 */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  "password", "password1", "password12", "password123", "password1234", "passw0rd", "p@ssw0rd", "p@ssword",
  "12345678", "123456789", "1234567890", "0123456789", "11111111", "00000000", "87654321", "12341234",
  "qwertyui", "qwerty12", "qwerty123", "qwertyuiop", "1q2w3e4r", "1qaz2wsx", "asdfghjk", "zxcvbnm1",
  "abc12345", "abcd1234", "abcdefgh", "aa123456", "iloveyou", "letmein1", "letmeinplease", "welcome1",
  "welcome123", "admin123", "admin1234", "administrator", "changeme", "changeme1", "default1", "trustno1",
  "sunshine", "princess", "football", "baseball", "superman", "starwars", "computer", "whatever",
  "deerflow", "deerflow1", "deerflow123", "secret123", "test1234", "testtest",
]);

/**
 * Why `password` is not acceptable for a new local account, or `undefined`.
 * The rule of DeerFlow's register/initialize/change-password: at least 8
 * characters and not a common password.
 */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Password must be at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return "Password is too common; choose a stronger password.";
  return undefined;
}

/** Throw `auth.weak_password` unless {@link passwordProblem} accepts `password`. */
export function assertStrongPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new AuthError("auth.weak_password", problem);
}
