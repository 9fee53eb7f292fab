/**
 * Summarise the CPU profiles `BENCH_PROFILE_DIR` writes (one per stress round):
 * on-CPU samples per function (self and inclusive) and per source group,
 * over all the given files together.
 *
 *   npx tsx bench/gateway/profile-summary.ts [--admission] [--top N] dir-or-file…
 *
 * `--admission` keeps only the samples between the first and the last first
 * model call of each round (the `admission` times the bench stores in each
 * file), i.e. what admitting the burst cost. Samples are counted, not timed:
 * a sample whose interval is long means the thread waited for a core, which
 * is not the gateway's cost.
 */
import fs from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  admission?: number[];
}

const args = process.argv.slice(2);
const admissionOnly = args.includes("--admission");
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
const inputs = args.filter((a, i) => !a.startsWith("--") && (topAt < 0 || i !== topAt + 1));
const files = inputs.flatMap((p) => (fs.statSync(p).isDirectory() ? fs.readdirSync(p).filter((f) => f.endsWith(".cpuprofile")).map((f) => path.join(p, f)) : [p]));
if (!files.length) {
  console.error("usage: profile-summary.ts [--admission] [--top N] <dir or .cpuprofile>…");
  process.exit(2);
}

/** A readable name: function, then the source path from `packages/` or `node_modules/` on. */
function label(f: ProfileNode["callFrame"]): string {
  const where = f.url.replace(/^.*?\/(packages|node_modules)\//, "$1/").replace(/^file:\/\//, "");
  return `${f.functionName || "(anonymous)"}${where ? ` ${where}` : ""}`;
}

/** The group a frame's time is charged to: a package's subsystem folder, a dependency, or a Node/V8 bucket. */
function group(f: ProfileNode["callFrame"]): string {
  const m = /packages\/([^/]+)\/src\/([^/]+)/.exec(f.url);
  if (m) return `${m[1]}/${m[2].replace(/\.ts$/, "")}`;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (dep) return `dependency ${dep[1]}`;
  if (f.url.startsWith("node:")) return f.url.split("/").slice(0, 2).join("/");
  return f.url ? "other" : f.functionName;
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const groups = new Map<string, number>();
let busy = 0;
let idle = 0;
for (const file of files) {
  const p = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const [from, to] = p.admission ?? [];
  if (admissionOnly && (from === undefined || to === undefined)) {
    console.error(`${file}: no admission window recorded, skipped`);
    continue;
  }
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (admissionOnly && (t < from! || t > to!)) continue;
    const node = byId.get(p.samples[i]);
    if (!node) continue;
    const name = node.callFrame.functionName;
    if (name === "(idle)") {
      idle++;
      continue;
    }
    busy++;
    const key = label(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + 1);
    const g = group(node.callFrame);
    groups.set(g, (groups.get(g) ?? 0) + 1);
    // Each function once per sample, however often it recurs on the stack.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id)!.callFrame);
      if (k === "(root)" || seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + 1);
    }
  }
}

const pct = (n: number) => `${((100 * n) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${String(v).padStart(7)} ${pct(v)}  ${k}`);
};
console.log(`${files.length} profile(s)${admissionOnly ? ", admission windows only" : ""}: ${busy} on-CPU samples, ${idle} idle`);
print("by group (self)", groups);
print("by function (self)", self);
print("by function (inclusive)", inclusive);
