/**
 * End-to-end: the built web UI in real headless Chromium against the real gateway running DeerFlow's real
 * lead agent (tools, sandbox, full middleware chain); only the chat model is scripted.
 * Requires /usr/bin/chromium (Debian package `chromium`); skipped with a visible reason when absent.
 * `bash` runs in bubblewrap (Debian package `bubblewrap`) when it works, else on the host (local provider).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentText } from "@deerflow-ts/harness";
import type { ModelRequest } from "@deerflow-ts/harness";
import { INITIAL_JS_BUDGET_KB, measureBundle } from "../../scripts/initial-js.mjs";
import { buildWebDist } from "./browser";
import { BWRAP_OK, CSV_TEXT, PNG_BASE64, PNG_BYTES, REPORT_MD, slowText, startScriptedGateway, userInput, type ScriptedGateway } from "./scripted-gateway";

const CHROMIUM = "/usr/bin/chromium";
const here = path.dirname(fileURLToPath(import.meta.url));
const webRoot = path.resolve(here, "../..");
const dist = path.join(webRoot, "dist");
const shots = path.resolve(webRoot, "../../docs/screenshots");
const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[web e2e] SKIPPED: ${CHROMIUM} not found (apt-get install -y chromium)`);

let server: ScriptedGateway;
let browser: Browser;
let context: BrowserContext;
let page: Page;

/** Screenshots for the docs: taken on every run, written to docs/screenshots only with UPDATE_SCREENSHOTS=1. */
async function shot(name: string): Promise<void> {
  const png = await page.screenshot();
  expect(png.length).toBeGreaterThan(1000);
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    fs.mkdirSync(shots, { recursive: true });
    fs.writeFileSync(path.join(shots, `${name}.png`), png);
  }
}

async function newChat(): Promise<void> {
  await page.goto(server.url + "/");
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function send(text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

function lastAssistant(): ReturnType<Page["locator"]> {
  return page.locator('[data-testid="assistant-message"]').last();
}

/** Agent-turn requests (not title calls) whose latest user words contain `word`. */
function agentRequests(word: string): ModelRequest[] {
  return server.requests.filter((r) => {
    const humans = r.messages.filter((m) => m.type === "human");
    const last = humans[humans.length - 1];
    return r.messages[0]?.type === "system" && !!last && userInput(contentText(last.content)).includes(word);
  });
}

/** Title-model requests of TitleMiddleware (DeerFlow's title prompt). */
function titleRequests(): string[] {
  return server.requests.filter((r) => r.messages.length === 1).map((r) => contentText(r.messages[0].content)).filter((t) => t.startsWith("Generate a concise title"));
}

async function threadState(id: string): Promise<Record<string, any>> {
  return ((await (await fetch(`${server.url}/api/threads/${id}/state`)).json()) as { values: Record<string, any> }).values;
}

async function threadIdFromUrl(): Promise<string> {
  await page.waitForFunction(() => new URLSearchParams(location.search).has("thread"));
  return new URL(page.url()).searchParams.get("thread") as string;
}

describe.skipIf(!hasChromium)("web UI e2e (headless Chromium, real gateway, real lead agent, scripted model)", () => {
  beforeAll(async () => {
    buildWebDist(dist);
    server = await startScriptedGateway(dist);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true, colorScheme: "light" });
    page = await context.newPage();
    page.setDefaultTimeout(12_000);
    page.on("pageerror", (e) => console.error("[page error]", e.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it(`the JavaScript index.html loads eagerly stays within ${INITIAL_JS_BUDGET_KB} KB gzip (the build these tests run)`, () => {
    const m = measureBundle(dist);
    // The chat view's own client: no general-purpose SDK in the first load (it alone was ~120 KB gzip).
    const initial = m.initial.map((c) => fs.readFileSync(path.join(dist, c.file), "utf8")).join("\n");
    expect(initial).not.toContain("Exceeded maximum SSE reconnection attempts");
    expect(m.initial.length).toBeGreaterThan(0);
    expect(m.initialBytes / 1024).toBeLessThanOrEqual(INITIAL_JS_BUDGET_KB);
    // KaTeX and highlight.js stay out of the first load (each arrives with the first math or code block).
    expect(m.lazy.some((c) => c.file.includes("katex"))).toBe(true);
    expect(m.lazy.some((c) => c.file.includes("highlight-languages"))).toBe(true);
    expect(initial).not.toContain("registerLanguage(");
  });

  it("streams an answer token by token with Markdown, highlighted code, a table and KaTeX math; the title appears", async () => {
    await newChat();
    await expect.poll(() => page.getByRole("combobox", { name: "Model" }).locator("option").count()).toBe(2);
    // Record every intermediate text of the assistant message, to prove it streamed token by token.
    await page.evaluate(() => {
      const w = window as unknown as { __seen: string[] };
      w.__seen = [];
      new MutationObserver(() => {
        const t = document.querySelector('[data-testid="assistant-message"] .answer')?.textContent ?? "";
        if (t && w.__seen[w.__seen.length - 1] !== t) w.__seen.push(t);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await send("hello there");
    await lastAssistant().locator(".katex").waitFor({ timeout: 15_000 });
    const seen = await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen);
    const partial = seen.filter((t) => t.includes("Hello") && !t.includes("math"));
    expect(partial.length).toBeGreaterThan(3);
    const a = lastAssistant();
    expect(await a.locator("table td").first().textContent()).toBe("alpha");
    expect(await a.locator("code .hljs-keyword").first().textContent()).toBe("const");
    await expect.poll(() => page.getByTestId("thread-title").textContent()).toBe("Chat: hello there");
    const id = await threadIdFromUrl();
    await page.locator(`[data-thread-id="${id}"]`).getByText("Chat: hello there").waitFor();
    await page.getByRole("button", { name: "Send" }).waitFor();
    // The title is TitleMiddleware's: it asked the configured title model with DeerFlow's prompt and stripped the quotes.
    expect(titleRequests().some((t) => t.includes("\nUser: hello there\nAssistant: Hello! Here is some **Markdown**"))).toBe(true);
    expect((await threadState(id)).title).toBe("Chat: hello there");
    // The model saw the real lead chain's request: one leading system prompt (static prompt + date reminder) and the
    // user's words inside InputSanitization's boundary markers.
    const req = agentRequests("hello there")[0];
    expect(req.messages.filter((m) => m.type === "system")).toHaveLength(1);
    expect(contentText(req.messages[0].content)).toContain("You are DeerFlow 2.0");
    expect(contentText(req.messages[0].content)).toContain("<current_date>");
    expect(contentText(req.messages[req.messages.length - 1].content)).toContain("--- BEGIN USER INPUT ---");
    expect(req.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["write_file", "read_file", "bash", "present_files", "ask_clarification"]));
    expect(req.tools.some((t) => t.name === "write_todos")).toBe(false);
    await shot("chat");
  });

  it("sanitises model output: <img onerror>, <script> and javascript: links do not run", async () => {
    await newChat();
    await send("xss test");
    await lastAssistant().getByText("done.").waitFor();
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.locator(".markdown img[onerror], .markdown script").count()).toBe(0);
    const hrefs = await page.locator(".markdown a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(hrefs.some((h) => h?.startsWith("javascript:"))).toBe(false);
  });

  it("runs tools, shows steps, opens the presented artifact in the panel and downloads it; the panel survives reload", async () => {
    await newChat();
    await send("write a report please");
    const preview = page.getByTestId("artifact-preview");
    await preview.locator("h1", { hasText: "Quarterly report" }).waitFor({ timeout: 15_000 });
    expect(await preview.locator("table td").first().textContent()).toBe("Q1");
    await lastAssistant().getByText("The report is ready").waitFor();
    // Tool steps: names, results, expandable arguments, reasoning collapsible.
    const write = page.locator('[data-testid="tool-step"][data-tool="write_file"]');
    await write.locator("summary").click();
    expect(await write.locator(".tool-args").textContent()).toContain("/mnt/user-data/outputs/report.md");
    expect(await write.locator(".tool-result").textContent()).toBe("OK");
    expect(await write.locator(".tool-status").textContent()).toBe("done");
    expect(await page.locator('[data-testid="tool-step"][data-tool="present_files"] .tool-status').textContent()).toBe("done");
    expect(await page.locator("details.reasoning summary").first().textContent()).toBe("Thinking");
    await shot("artifacts");
    // Download.
    const [download] = await Promise.all([page.waitForEvent("download"), preview.getByRole("link", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toBe("report.md");
    expect(fs.readFileSync((await download.path()) as string, "utf8")).toBe(REPORT_MD);
    expect(download.url()).toContain("?download=true");
    // The real present_files put the virtual path into thread state; the real write_file wrote the thread's outputs dir.
    const id = await threadIdFromUrl();
    expect((await threadState(id)).artifacts).toEqual(["/mnt/user-data/outputs/report.md"]);
    expect(fs.readFileSync(path.join(server.baseDir, "users", "default", "threads", id, "user-data", "outputs", "report.md"), "utf8")).toBe(REPORT_MD);
    // Reload: artifacts come back from thread state.
    await page.reload();
    await page.getByRole("button", { name: "Files (1)" }).click();
    await page.getByTestId("artifact-item").getByText("report.md").click();
    await page.getByTestId("artifact-preview").locator("h1", { hasText: "Quarterly report" }).waitFor();
  });

  it("previews CSV as a table, HTML in a script-less sandboxed iframe, and images", async () => {
    await newChat();
    await send("make a gallery");
    await lastAssistant().getByText("Three files are ready.").waitFor({ timeout: 15_000 });
    const items = page.getByTestId("artifact-item");
    await expect.poll(() => items.count()).toBe(3);
    const preview = page.getByTestId("artifact-preview");
    await items.getByText("data.csv").click();
    await preview.locator("table.csv td", { hasText: "1,200" }).waitFor();
    expect(await preview.locator("table.csv th").allTextContents()).toEqual(CSV_TEXT.split("\n")[0].split(","));
    await shot("artifact-csv");
    await items.getByText("page.html").click();
    const iframe = preview.locator("iframe.artifact-html");
    await iframe.waitFor();
    expect(await iframe.getAttribute("sandbox")).toBe("");
    const frame = page.frameLocator("iframe.artifact-html");
    await frame.locator("h1").waitFor();
    await page.waitForTimeout(300);
    expect(await frame.locator("h1").textContent()).toBe("Static page");
    await items.getByText("dot.png").click();
    const img = preview.locator("img.artifact-image");
    await img.waitFor();
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(1);
    // The PNG was produced by the real bash tool in the sandbox (printf | base64 -d into /mnt/user-data/outputs).
    expect(server.runtime.sandboxProvider.kind).toBe(BWRAP_OK ? "bwrap" : "local");
    const bash = page.locator('[data-testid="tool-step"][data-tool="bash"]');
    expect(await bash.locator(".tool-status").textContent()).toBe("done");
    await bash.locator("summary").click();
    expect(await bash.locator(".tool-args").textContent()).toContain("base64 -d > /mnt/user-data/outputs/dot.png");
    expect((await bash.locator(".tool-result").textContent())?.trim()).toBe(String(PNG_BYTES));
    const id = await threadIdFromUrl();
    const png = fs.readFileSync(path.join(server.baseDir, "users", "default", "threads", id, "user-data", "outputs", "dot.png"));
    expect(png.toString("base64")).toBe(PNG_BASE64);
  });

  it("shows llm_retry toasts and the model-error fallback, with a working retry", async () => {
    await newChat();
    await send("flaky request");
    await page.getByTestId("toast").filter({ hasText: "LLM request retry 1/2" }).waitFor({ timeout: 15_000 });
    const fallback = page.locator(".answer.error-fallback");
    await fallback.waitFor({ timeout: 15_000 });
    await shot("model-error");
    await fallback.getByRole("button", { name: "Retry" }).click();
    await lastAssistant().getByText("Recovered after the retry.").waitFor({ timeout: 15_000 });
  });

  it("uploads an attached file before the run; the scripted model reads it", async () => {
    await newChat();
    await page.getByTestId("file-input").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("The secret word is pineapple.") });
    await page.getByTestId("attachment-chip").getByText("notes.txt").waitFor();
    await shot("upload");
    await send("what is in the attached file?");
    await lastAssistant().getByText("The file says: The secret word is pineapple.").waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="human-message"] .chip', { hasText: "notes.txt" }).waitFor();
    expect(await page.getByTestId("attachment-chip").count()).toBe(0);
    const id = await threadIdFromUrl();
    const list = (await (await fetch(`${server.url}/api/threads/${id}/uploads/list`)).json()) as { files: Array<{ filename: string }> };
    expect(list.files.map((f) => f.filename)).toContain("notes.txt");
    // The Uploads middleware announced the file to the model with its virtual path; the real read_file read it.
    const req = agentRequests("attached")[0];
    const userText = contentText(req.messages[req.messages.length - 1].content);
    expect(userText).toContain("<current_uploads>"); // server-made block stays outside the user-input frame
    expect(userText).toContain("Path: /mnt/user-data/uploads/notes.txt");
    const read = page.locator('[data-testid="tool-step"][data-tool="read_file"]');
    expect(await read.locator(".tool-status").textContent()).toBe("done");
  });

  it("renders a clarification card; answering sends the hidden human_input_response as a new run", async () => {
    await newChat();
    await send("help me with a trip");
    const card = page.getByTestId("clarification");
    await card.getByText("Which city do you want to visit?").waitFor({ timeout: 15_000 });
    await shot("clarification");
    await card.getByRole("button", { name: "Rome" }).click();
    await page.getByText("Great choice — planning your trip to Rome.").waitFor({ timeout: 15_000 });
    await card.getByText("Answered").waitFor();
    // The answer message is hidden (only the original question bubble is visible).
    expect(await page.getByTestId("human-message").count()).toBe(1);
    const id = await threadIdFromUrl();
    const state = (await (await fetch(`${server.url}/api/threads/${id}/state`)).json()) as { values: { messages: Array<{ type: string; additional_kwargs?: Record<string, any> }> } };
    const answer = state.values.messages.filter((m) => m.type === "human").pop();
    expect(answer?.additional_kwargs?.hide_from_ui).toBe(true);
    expect(answer?.additional_kwargs?.human_input_response).toMatchObject({ kind: "human_input_response", response_kind: "option", option_id: "option-2", value: "Rome" });
    // The card came from the real ClarificationMiddleware: the question ended the first run as a tool message
    // carrying DeerFlow's human_input request.
    const ask = state.values.messages.find((m) => m.type === "tool" && (m as { name?: string }).name === "ask_clarification") as { content: unknown; artifact?: Record<string, any> } | undefined;
    expect(contentText(ask?.content as string)).toContain("Which city do you want to visit?");
    expect(ask?.artifact?.human_input).toMatchObject({ kind: "human_input_request", input_mode: "choice_with_other" });
  });

  it("plan mode shows the todo list updating live", async () => {
    await newChat();
    await page.getByLabel("Plan mode").check();
    await send("make a plan");
    await page.locator('[data-testid="todo"].in_progress', { hasText: "Draft" }).waitFor({ timeout: 15_000 });
    await shot("plan-mode");
    await lastAssistant().getByText("All steps are done.").waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-testid="todo"]').count()).toBe(3);
    await page.locator('[data-testid="todo"].in_progress', { hasText: "Review" }).waitFor();
    // Plan mode reached the lead agent: the Todo middleware gave the model write_todos and its system prompt.
    const req = agentRequests("make a plan")[0];
    expect(req.tools.map((t) => t.name)).toContain("write_todos");
    expect(contentText(req.messages[0].content)).toContain("<todo_list_system>");
    const id = await threadIdFromUrl();
    expect((await threadState(id)).todos).toEqual([
      { content: "Research", status: "completed" },
      { content: "Draft", status: "completed" },
      { content: "Review", status: "in_progress" },
    ]);
    await page.getByLabel("Plan mode").uncheck();
  });

  it("sub-agents toggle: parallel sub-agent cards with live steps, status, result and usage; restored after reload", async () => {
    await newChat();
    await page.getByLabel("Sub-agents").check();
    await send("delegate the research");
    const cards = page.locator('[data-testid="subagent-card"]');
    await cards.first().waitFor({ timeout: 15_000 });
    await lastAssistant().getByText("Both sub-agents reported back.").waitFor({ timeout: 20_000 });
    expect(await cards.count()).toBe(2);
    for (const w of ["alpha", "beta"]) {
      const card = page.locator(`[data-testid="subagent-card"][data-task-id="call_task_${w}"]`);
      await expect.poll(() => card.getAttribute("data-status")).toBe("completed");
      await card.locator("summary").click();
      await card.locator('[data-testid="subagent-result"]').getByText(`Found 3 facts about ${w}.`).waitFor();
      // its live steps: the first AI message with the tool it called
      await card.locator('[data-testid="subagent-steps"] li').first().getByText(`Looking into ${w}.`).waitFor();
      expect(await card.getByText(`Research ${w}`).count()).toBeGreaterThan(0);
      expect(await card.locator('[data-testid="subagent-usage"]').textContent()).toMatch(/\d+ tokens/);
    }
    await shot("subagents");
    // ultra mode reached the lead agent: it was offered `task`; each child ran its own chain without it
    const lead = agentRequests("delegate the research")[0];
    expect(lead.tools.map((t) => t.name)).toContain("task");
    const child = server.requests.find((r) => !r.tools.some((t) => t.name === "task") && contentText(r.messages[0].content).includes("research sub-agent"));
    expect(child).toBeDefined();
    // after a reload the cards come back from the task results' status metadata
    await page.reload();
    await page.locator('[data-testid="subagent-card"][data-status="completed"]').nth(1).waitFor({ timeout: 10_000 });
    await page.getByLabel("Sub-agents").uncheck();
  });

  it("Stop while sub-agents work: their cards say cancelled (also reopened), the turn is marked stopped", async () => {
    await newChat();
    await page.getByLabel("Sub-agents").check();
    await send("delegate and hold");
    // Both children are inside their model call when the user stops.
    await expect.poll(() => server.requests.filter((r) => !r.tools.some((t) => t.name === "task") && r.messages.some((m) => contentText(m.content).includes("subtask hold"))).length, { timeout: 15_000 }).toBe(2);
    await page.locator('[data-testid="subagent-card"][data-status="running"]').nth(1).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByRole("button", { name: "Send" }).waitFor();
    for (const w of ["alpha", "beta"]) {
      await expect.poll(() => page.locator(`[data-testid="subagent-card"][data-task-id="call_hold_${w}"]`).getAttribute("data-status")).toBe("cancelled");
    }
    await lastAssistant().getByTestId("stopped-marker").waitFor();
    // The thread keeps how each delegation ended: "cancelled", the status the CLI prints too.
    const id = await threadIdFromUrl();
    await expect
      .poll(async () => ((await threadState(id)).messages as Array<{ type: string; name?: string; additional_kwargs?: Record<string, unknown> }>).filter((m) => m.type === "tool" && m.name === "task").map((m) => m.additional_kwargs?.subagent_status), { timeout: 10_000 })
      .toEqual(["cancelled", "cancelled"]);
    await page.reload();
    await page.locator('[data-testid="subagent-card"][data-status="cancelled"]').nth(1).waitFor({ timeout: 10_000 });
    expect(await page.locator('[data-testid="subagent-card"][data-status="running"], [data-testid="subagent-card"][data-status="failed"]').count()).toBe(0);
    await lastAssistant().getByTestId("stopped-marker").waitFor();
    await page.getByLabel("Sub-agents").uncheck();
  });

  it("re-joins the stream after a reload mid-run without losing text", async () => {
    await newChat();
    await send("slow please");
    await lastAssistant().getByText(/w10\b/).waitFor({ timeout: 15_000 });
    const id = await threadIdFromUrl();
    expect(await page.evaluate((k) => sessionStorage.getItem(k), `lg:stream:${id}`)).toBeTruthy();
    await page.reload();
    // Still streaming after the reload (re-joined, not just loaded from the final state)…
    await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid="assistant-message"]')?.textContent ?? "";
      return t.includes("w0") && !t.includes("END.");
    });
    // …and it completes with the full, un-duplicated text.
    await lastAssistant().getByText("END.", { exact: false }).waitFor({ timeout: 20_000 });
    const text = (await lastAssistant().locator(".answer").textContent())?.trim();
    expect(text).toBe(slowText());
    // The run ends after the answer's last token (the title model call and after-agent hooks still run).
    await expect.poll(() => page.evaluate((k) => sessionStorage.getItem(k), `lg:stream:${id}`), { timeout: 10_000 }).toBeNull();
  });

  it("the stop button cancels the run", async () => {
    await newChat();
    await send("slow again");
    await lastAssistant().getByText(/w5\b/).waitFor({ timeout: 15_000 });
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByRole("button", { name: "Send" }).waitFor();
    const id = await threadIdFromUrl();
    await expect
      .poll(async () => {
        const runs = (await (await fetch(`${server.url}/api/threads/${id}/runs`)).json()) as Array<{ status: string }>;
        return runs[0]?.status;
      }, { timeout: 10_000 })
      .toBe("interrupted");
    const len = (await lastAssistant().textContent())?.length ?? 0;
    await page.waitForTimeout(800);
    expect((await lastAssistant().textContent())?.length ?? 0).toBe(len);
    expect(await lastAssistant().textContent()).not.toContain("END.");
    await lastAssistant().getByTestId("stopped-marker").waitFor();
    // Reopened: no sub-agent says so, the run record (interrupted) does, and the turn is still marked.
    await page.reload();
    await lastAssistant().getByTestId("stopped-marker").waitFor({ timeout: 10_000 });
    expect(await page.getByTestId("stopped-marker").count()).toBe(1);
  });

  it("renames and deletes threads from the sidebar; search filters", async () => {
    await newChat();
    await send("hello rename me");
    await lastAssistant().locator(".katex").waitFor({ timeout: 15_000 });
    const id = await threadIdFromUrl();
    const item = page.locator(`[data-thread-id="${id}"]`);
    await item.getByText("Chat: hello rename me").waitFor();
    // Newest first.
    expect(await page.getByTestId("thread-item").first().getAttribute("data-thread-id")).toBe(id);
    await item.getByRole("button", { name: /^Rename/ }).click();
    const input = item.getByRole("textbox", { name: "New title" });
    await input.fill("My renamed chat");
    await input.press("Enter");
    await item.getByText("My renamed chat").waitFor();
    await expect.poll(async () => ((await (await fetch(`${server.url}/api/threads/${id}`)).json()) as { values: { title?: string } }).values.title).toBe("My renamed chat");
    await page.reload();
    await page.locator(`[data-thread-id="${id}"]`).getByText("My renamed chat").waitFor();
    await page.getByRole("searchbox", { name: "Search conversations" }).fill("renamed");
    expect(await page.getByTestId("thread-item").count()).toBe(1);
    await shot("sidebar-search");
    await page.getByRole("searchbox", { name: "Search conversations" }).fill("");
    page.once("dialog", (d) => void d.accept());
    await page.locator(`[data-thread-id="${id}"]`).getByRole("button", { name: /^Delete/ }).click();
    await page.locator(`[data-thread-id="${id}"]`).waitFor({ state: "detached" });
    expect((await fetch(`${server.url}/api/threads/${id}`)).status).toBe(404);
  });

  it("dark theme and a narrow (mobile) layout", async () => {
    await page.goto(server.url + "/");
    await page.getByRole("button", { name: "Switch to dark theme" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await page.getByTestId("thread-item").filter({ hasText: "Chat: write a report" }).locator(".thread-title").first().click();
    await lastAssistant().getByText("The report is ready").waitFor();
    await page.getByRole("button", { name: "Files (1)" }).click();
    await page.getByTestId("artifact-item").getByText("report.md").click();
    await page.getByTestId("artifact-preview").locator("h1").waitFor();
    await shot("dark");
    await page.setViewportSize({ width: 390, height: 800 });
    await shot("mobile-artifact");
    await page.getByRole("button", { name: "Close files panel" }).click();
    await page.getByRole("button", { name: "Toggle conversation list" }).waitFor();
    await shot("mobile");
    await page.getByRole("button", { name: "Toggle conversation list" }).click();
    await page.waitForTimeout(300);
    await shot("mobile-sidebar");
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole("button", { name: "Switch to light theme" }).click();
  });

  it("shows a plain error with retry when the server is unreachable", async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    p.setDefaultTimeout(20_000);
    await p.goto(server.url + "/");
    await p.getByRole("textbox", { name: "Message" }).waitFor();
    await p.route("**/api/**", (r) => r.abort("connectionrefused"));
    await p.getByRole("textbox", { name: "Message" }).fill("anyone there?");
    await p.getByRole("textbox", { name: "Message" }).press("Enter");
    await p.getByTestId("error-banner").waitFor();
    expect(await p.getByTestId("error-banner").textContent()).toMatch(/Could not start the run/);
    await p.unroute("**/api/**");
    await p.getByTestId("error-banner").getByRole("button", { name: "Retry" }).click();
    await p.getByTestId("assistant-message").getByText("Hello!").waitFor({ timeout: 15_000 });
    expect(await p.getByTestId("error-banner").count()).toBe(0);
    await ctx.close();
  });
});
