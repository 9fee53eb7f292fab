/**
 * End-to-end in headless Chromium: the composer's `/` skill picker against
 * the real gateway and lead agent (scripted model), and slash activation
 * reaching the model. Skills live in a temp project root, so toggles never
 * touch this repository.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentText } from "@deerflow-ts/harness";
import type { DeerFlowRuntime, ModelRequest } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { Gateway } from "@deerflow-ts/server";
import { zipSync } from "fflate";
import { startServer } from "@deerflow-ts/server";
import { buildPageHarness, buildWebDist, chromiumAvailable, launchPage, startE2eGateway, teardown, WEB_ROOT } from "./browser";

const hasChromium = chromiumAvailable("skills UI");

const CONFIG = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
title:
  enabled: false
`;

function writeSkill(root: string, name: string, description: string, body: string): void {
  fs.mkdirSync(path.join(root, "skills/public", name), { recursive: true });
  fs.writeFileSync(path.join(root, "skills/public", name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n${body}\n`);
}

describe.skipIf(!hasChromium)("skills UI e2e (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-skills-"));
  const dist = path.join(root, "dist");
  const requests: ModelRequest[] = [];
  // Started in beforeAll: the runtime and gateway, the browser and its page.
  let runtime: DeerFlowRuntime, gateway: Gateway, url: string, browser: Browser, page: Page;
  // A second gateway on the same runtime serving the page harness (SkillsPage rendered alone).
  let pagesGateway: Gateway, pagesUrl: string;

  beforeAll(async () => {
    writeSkill(root, "alpha-search", "Search the web quickly for one fact.", "# Alpha\nALPHA-BODY: answer in one line.");
    writeSkill(root, "beta-writer", "Write long reports.", "# Beta\nBETA-BODY");
    writeSkill(root, "gamma-off", "A disabled skill.", "# Gamma");
    fs.writeFileSync(path.join(root, "extensions_config.json"), JSON.stringify({ skills: { "gamma-off": { enabled: false } } }));
    buildWebDist(dist);
    const model = new ScriptedModel(
      [
        (req) => {
          requests.push(req);
          return "Skill run finished.";
        },
      ],
      { onExhausted: "repeat-last", recordRequests: false },
    );
    ({ runtime, gateway, url } = await startE2eGateway({ configYaml: CONFIG, root, dist, model }));
    buildPageHarness(path.join(root, "pages"));
    ({ gateway: pagesGateway, url: pagesUrl } = await startServer({ runtime, webDistDir: path.join(root, "pages"), port: 0, quiet: true, log: () => {} }));
    ({ browser, page } = await launchPage());
  }, 120_000);

  afterAll(() => teardown([browser, pagesGateway, gateway, runtime], root));

  it("typing / lists enabled skills, filters as you type, Enter inserts the command, sending activates the skill", async () => {
    await page.goto(`${url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("/");
    const list = page.getByRole("listbox", { name: "Skills" });
    await list.waitFor();
    expect(await list.getByRole("option").allTextContents()).toEqual(["/alpha-searchSearch the web quickly for one fact.", "/beta-writerWrite long reports."]);
    await box.fill("/be");
    expect(await list.getByRole("option").count()).toBe(1);
    await box.fill("/a");
    await box.press("ArrowDown");
    expect(await list.getByRole("option", { selected: true }).textContent()).toContain("/beta-writer");
    await box.press("ArrowUp");
    await box.press("Enter");
    expect(await box.inputValue()).toBe("/alpha-search ");
    await expect.poll(() => list.count()).toBe(0);
    await box.pressSequentially("capital of France?");
    await box.press("Enter");
    await page.getByText("Skill run finished.").waitFor();
    const agentTurn = requests.find((r) => r.messages[0]?.type === "system");
    expect(agentTurn).toBeDefined();
    const system = contentText(agentTurn!.messages[0]!.content);
    expect(system).toContain("<location>/mnt/skills/public/alpha-search/SKILL.md</location>");
    expect(system).toMatch(/<disabled_skills>\s*<name>gamma-off<\/name>/);
    expect(agentTurn!.messages.some((m) => contentText(m.content).includes("ALPHA-BODY"))).toBe(true);
  });

  it("disabled skills are not offered; Escape closes the picker", async () => {
    await page.goto(`${url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("/gamma");
    // Disabled skills are not offered.
    await expect.poll(() => page.getByRole("listbox", { name: "Skills" }).count()).toBe(0);
    await box.fill("/beta");
    await page.getByRole("listbox", { name: "Skills" }).waitFor();
    await box.press("Escape");
    await expect.poll(() => page.getByRole("listbox", { name: "Skills" }).count()).toBe(0);
  });

  it("the Skills page: list by category, enable a disabled skill, view SKILL.md, install, refuse a dangerous package, delete", async () => {
    page.on("dialog", (d) => void d.accept());
    await page.goto(`${pagesUrl}/?page=skills`);
    const publicSection = page.getByRole("region", { name: "Public skills" });
    await publicSection.waitFor();
    expect(await publicSection.getByTestId("skill-card").evaluateAll((els) => els.map((e) => e.getAttribute("data-skill")))).toEqual(["alpha-search", "beta-writer", "gamma-off"]);
    const gamma = page.getByRole("checkbox", { name: "Enable gamma-off" });
    expect(await gamma.isChecked()).toBe(false);
    await gamma.click(); // controlled: it flips once the PUT and the reload are done
    await expect.poll(() => page.getByRole("checkbox", { name: "Enable gamma-off" }).isChecked()).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(root, "extensions_config.json"), "utf8")).skills["gamma-off"]).toEqual({ enabled: true });

    if (process.env.UPDATE_SCREENSHOTS === "1") fs.writeFileSync(path.resolve(WEB_ROOT, "../../docs/screenshots/skills-page.png"), await page.screenshot());
    await page.locator('[data-skill="alpha-search"]').getByRole("button", { name: "View SKILL.md" }).click();
    const viewer = page.getByRole("dialog", { name: "SKILL.md of alpha-search" });
    expect(await viewer.textContent()).toContain("ALPHA-BODY");
    await viewer.getByRole("button", { name: "Close" }).click();

    const pkg = (name: string, extra: Record<string, Uint8Array> = {}) =>
      Buffer.from(zipSync({ [`${name}/SKILL.md`]: new TextEncoder().encode(`---\nname: ${name}\ndescription: Installed from the page.\n---\n# ${name}\n`), ...extra }));
    const input = page.getByTestId("skill-file-input");
    await input.setInputFiles({ name: "ui-installed.skill", mimeType: "application/zip", buffer: pkg("ui-installed") });
    await page.getByRole("status").getByText("Skill 'ui-installed' installed successfully").waitFor();
    const custom = page.getByRole("region", { name: "Custom skills" });
    await custom.locator('[data-skill="ui-installed"]').waitFor();

    await input.setInputFiles({ name: "evil.skill", mimeType: "application/zip", buffer: pkg("evil", { "evil/scripts/x.py": new TextEncoder().encode("import os\nos.system('id')\n") }) });
    expect(await page.getByRole("alert").textContent()).toContain("Static security scan blocked skill 'evil'");

    await custom.locator('[data-skill="ui-installed"]').getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => page.locator('[data-skill="ui-installed"]').count()).toBe(0);
    expect(fs.existsSync(path.join(root, "data/users/default/skills/custom/ui-installed"))).toBe(false);
  });
});
