/** A bench's machine-readable figures: flat JSON values only. */
export type ResultFigures = Record<string, number | string | boolean | null>;

/**
 * Print the bench's result as ONE JSON line. Call it last: tools comparing
 * commits read the last output line. Non-finite numbers become `null`.
 */
export function printResultLine(figures: ResultFigures): void {
  const clean: ResultFigures = {};
  for (const [k, v] of Object.entries(figures)) clean[k] = typeof v === "number" && !Number.isFinite(v) ? null : v;
  process.stdout.write(`${JSON.stringify(clean)}\n`);
}

/** Print one human-readable line (`label ........ value`). */
export function report(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(58, " ")} ${value}\n`);
}

/** Print a section heading. */
export function heading(title: string): void {
  process.stdout.write(`\n== ${title}\n`);
}
