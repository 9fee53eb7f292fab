/**
 * HTML → Markdown throughput and peak memory of web_fetch on a ~1 MB page.
 *
 * 1. web_fetch's pipeline (charset decode → strip → readability → Markdown,
 *    default 4096-char budget) on the synthetic 1 MB news page. Target ≥ 20 pages/s.
 * 2. The same page converted in full (no budget), for context.
 * 3. A naive reference: readability on the unstripped page, the article
 *    serialised to a string and the whole string converted by turndown.
 * 4. A worst case: 1 MB of pure article markup (nothing to strip), in full.
 * 5. End to end through the web_fetch tool over loopback HTTP.
 * Peak RSS / heap are sampled after every conversion. Wall and CPU time are
 * both reported: on a shared machine the CPU figure is the stable one.
 * Ends with one JSON line.
 */
import os from "node:os";
import { Readability } from "@mozilla/readability";
import { gfm } from "@joplin/turndown-plugin-gfm";
import TurndownService from "turndown";
import { envInt, heading, median, percentile, printResultLine, report, round } from "../lib";
import { decodeBody, htmlToMarkdown, createWebFetchTool } from "../../packages/harness/src/web-research";
import { parseHtmlDocument } from "../../packages/harness/src/web-research/dom";
import { startPageServer } from "../../packages/harness/src/testing/web-doubles";
import { buildBenchPage } from "./page";

const ITER = envInt("BENCH_WEB_FETCH_ITER", 40);
const WARMUP = 5;
const TARGET = 20;

let peakRss = 0;
let peakHeap = 0;
function sampleMemory(): void {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
}

/** Per-call CPU milliseconds of the last {@link timeSync} (process CPU, so GC threads count too). */
let lastCpu: number[] = [];

/**
 * Wall-clock ms per call. CPU ms per call go to `lastCpu`: on a shared
 * machine other processes stretch wall time but not this process's CPU time.
 */
function timeSync(fn: () => void, iterations: number, warmup = WARMUP): number[] {
  for (let i = 0; i < warmup; i++) fn();
  const out: number[] = [];
  lastCpu = [];
  for (let i = 0; i < iterations; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
    const d = process.cpuUsage(c);
    lastCpu.push((d.user + d.system) / 1000);
    sampleMemory();
  }
  return out;
}

function naiveConvert(html: string): string {
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  td.use(gfm);
  const article = new Readability(parseHtmlDocument(html)).parse();
  return td.turndown(article?.content ?? "");
}

function articleOnlyPage(bytes: number): string {
  const parts = ["<!DOCTYPE html><html><head><title>Long report</title></head><body><article><h1>Long report</h1>"];
  let size = parts[0].length;
  for (let i = 0; size < bytes; i++) {
    const p = `<h2>Section ${i}</h2><p>Paragraph ${i}: the council reviewed the budget, the river plan and the energy report in detail, with <a href="/r/${i}">a link</a> and <strong>emphasis</strong>.</p><ul><li>point one</li><li>point two</li></ul>`;
    parts.push(p);
    size += p.length;
  }
  parts.push("</article></body></html>");
  return parts.join("");
}

const perSecond = (ms: number[]) => 1000 / median(ms);

async function main(): Promise<void> {
  const page = buildBenchPage();
  const bytes = Buffer.from(page, "utf8");
  const worst = articleOnlyPage(1_000_000);
  process.stdout.write(`web-fetch bench: ${(bytes.length / 1e6).toFixed(2)} MB page, ${ITER} iterations, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}\n`);

  sampleMemory();
  const baseRss = process.memoryUsage().rss;

  heading("1. web_fetch pipeline (decode + readability + Markdown, 4096-char budget)");
  let out = "";
  const pipeline = timeSync(() => {
    out = htmlToMarkdown(decodeBody(bytes, "text/html; charset=utf-8").text, { url: "https://news.example.com/story" }).formatted;
  }, ITER);
  if (!out.startsWith("# Riverside solar farm: what the vote means") || out.length !== 4096) throw new Error(`unexpected output: ${out.slice(0, 120)} (${out.length})`);
  const pipelineCpu = lastCpu;
  report("median / p90 per page (wall)", `${round(median(pipeline), 1)} ms / ${round(percentile(pipeline, 90), 1)} ms`);
  report("median per page (CPU time)", `${round(median(pipelineCpu), 1)} ms`);
  report("throughput wall / CPU", `${round(perSecond(pipeline), 1)} / ${round(perSecond(pipelineCpu), 1)} pages/s (target ≥ ${TARGET})`);

  const pipelinePeakRss = peakRss;
  const pipelinePeakHeap = peakHeap;
  report("peak RSS / heap during this section", `${round(pipelinePeakRss / 2 ** 20, 1)} MB / ${round(pipelinePeakHeap / 2 ** 20, 1)} MB (RSS at start ${round(baseRss / 2 ** 20, 1)} MB)`);

  heading("2. same page, full conversion (no budget)");
  let full = "";
  const fullMs = timeSync(() => {
    full = htmlToMarkdown(page, { maxChars: 0 }).formatted;
  }, ITER);
  if (!full.includes("## Part 60")) throw new Error("full conversion lost the end of the article");
  const fullCpu = lastCpu;
  report("median per page wall / CPU", `${round(median(fullMs), 1)} / ${round(median(fullCpu), 1)} ms (${round(perSecond(fullCpu), 1)} pages/s CPU, ${full.length} chars of Markdown)`);

  heading("3. naive reference (readability on the unstripped page, whole article through turndown)");
  const naiveMs = timeSync(() => void naiveConvert(page), Math.max(5, Math.floor(ITER / 4)), 2);
  const naiveCpu = lastCpu;
  report("median per page wall / CPU", `${round(median(naiveMs), 1)} / ${round(median(naiveCpu), 1)} ms`);
  report("ours (1) vs naive, CPU throughput ratio", `${round(perSecond(pipelineCpu) / perSecond(naiveCpu), 1)}x`);

  heading("4. worst case: 1 MB of article markup, full conversion");
  timeSync(() => void htmlToMarkdown(worst, { maxChars: 0 }), Math.max(3, Math.floor(ITER / 8)), 1);
  const worstCpu = lastCpu;
  timeSync(() => void htmlToMarkdown(worst, {}), Math.max(5, Math.floor(ITER / 4)), 2);
  const worstBudgetCpu = lastCpu;
  report("CPU per page: full / 4096-char budget", `${round(median(worstCpu), 1)} ms / ${round(median(worstBudgetCpu), 1)} ms (${round(perSecond(worstBudgetCpu), 1)} pages/s with the budget)`);

  heading("5. end to end: web_fetch tool over loopback HTTP");
  const server = await startPageServer({ "/story": { headers: { "content-type": "text/html; charset=utf-8" }, body: bytes } });
  const tool = createWebFetchTool("direct", { allowPrivateAddresses: true });
  const rt = { signal: new AbortController().signal } as never;
  const toolMs: number[] = [];
  const toolCpu: number[] = [];
  for (let i = 0; i < WARMUP + Math.floor(ITER / 2); i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    const r = await tool.execute({ url: `${server.url}/story` }, rt);
    if (typeof r !== "string" || !r.includes("# Riverside solar farm")) throw new Error(`tool failed: ${JSON.stringify(r).slice(0, 200)}`);
    const d = process.cpuUsage(c);
    if (i >= WARMUP) {
      toolMs.push(performance.now() - t);
      toolCpu.push((d.user + d.system) / 1000);
    }
    sampleMemory();
  }
  await server.close();
  report("median per fetch wall / CPU (server in-process)", `${round(median(toolMs), 1)} / ${round(median(toolCpu), 1)} ms (${round(perSecond(toolMs), 1)} pages/s wall)`);

  heading("memory (whole run, including the naive reference and the worst case)");
  report("peak RSS / above start", `${round(peakRss / 2 ** 20, 1)} MB / ${round((peakRss - baseRss) / 2 ** 20, 1)} MB`);
  report("peak heap used", `${round(peakHeap / 2 ** 20, 1)} MB`);

  printResultLine({
    page_bytes: bytes.length,
    pages_per_s: round(perSecond(pipeline), 1),
    cpu_pages_per_s: round(perSecond(pipelineCpu), 1),
    ms_median: round(median(pipeline), 2),
    ms_p90: round(percentile(pipeline, 90), 2),
    cpu_ms_median: round(median(pipelineCpu), 2),
    target_pages_per_s: TARGET,
    meets_target_wall: perSecond(pipeline) >= TARGET,
    meets_target_cpu: perSecond(pipelineCpu) >= TARGET,
    full_cpu_pages_per_s: round(perSecond(fullCpu), 1),
    naive_cpu_pages_per_s: round(perSecond(naiveCpu), 1),
    speedup_vs_naive: round(perSecond(pipelineCpu) / perSecond(naiveCpu), 2),
    worst_case_full_cpu_ms: round(median(worstCpu), 1),
    worst_case_budget_cpu_ms: round(median(worstBudgetCpu), 1),
    tool_pages_per_s: round(perSecond(toolMs), 1),
    pipeline_peak_rss_mb: round(pipelinePeakRss / 2 ** 20, 1),
    pipeline_peak_heap_mb: round(pipelinePeakHeap / 2 ** 20, 1),
    peak_rss_mb: round(peakRss / 2 ** 20, 1),
    peak_heap_mb: round(peakHeap / 2 ** 20, 1),
    load_avg_1m: round(os.loadavg()[0], 2),
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
