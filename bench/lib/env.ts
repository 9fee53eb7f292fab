/** A positive integer from the environment, or `fallback` when unset/invalid. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** True when `--flag` is on the command line or env `envName` is `1`/`true`/`yes`. */
export function flagOrEnv(flag: string, envName: string): boolean {
  if (process.argv.slice(2).includes(flag)) return true;
  const v = (process.env[envName] ?? "").trim().toLowerCase();
  return v === "1" || v === "true" || v === "yes";
}
