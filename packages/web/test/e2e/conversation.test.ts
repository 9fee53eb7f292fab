/**
 * End-to-end in headless Chromium, the whole app against the real gateway and
 * lead agent (scripted model): Retry reruns the latest answer from the
 * checkpoint before it, Edit replaces the latest user message and reruns,
 * Branch continues a conversation from an earlier answer in a new thread, and
 * the branch bar links the two.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeerFlowRuntime } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { Gateway } from "@deerflow-ts/server";
import { buildWebDist, chromiumAvailable, launchPage, startE2eGateway, teardown } from "./browser";

const hasChromium = chromiumAvailable("conversation UI");
const CONFIG = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
title:
  enabled: false
agents_api:
  enabled: true
sandbox:
  use: local
`;

describe.skipIf(!hasChromium)("retry, edit and branches e2e (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-conv-"));
  const dist = path.join(root, "dist");
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;
  let model: ScriptedModel;

  beforeAll(async () => {
    buildWebDist(dist);
    model = new ScriptedModel(["Answer A1", "Answer B1", "Answer B2", "Answer C", "Branch answer", "Agent answer"]);
    ({ runtime, gateway, url } = await startE2eGateway({ configYaml: CONFIG, root, dist, model }));
    ({ browser, page } = await launchPage(15_000));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, gateway, runtime], root);
  });

  const send = async (text: string) => {
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill(text);
    await box.press("Enter");
  };
  const answers = async () => (await page.getByTestId("assistant-message").locator(".answer").allTextContents()).map((t) => t.trim());
  const humans = () => page.getByTestId("human-message").locator(".bubble").allTextContents();
  const idle = () => page.getByRole("button", { name: "Send" }).waitFor();

  it("retries the latest answer, edits the latest question and branches from an earlier answer", async () => {
    await page.goto(`${url}/`);
    await send("first question");
    await page.getByText("Answer A1").waitFor();
    await idle();
    await send("second question");
    await page.getByText("Answer B1").waitFor();
    await idle();

    // only the latest answer offers Retry
    expect(await page.getByRole("button", { name: "Regenerate answer" }).count()).toBe(1);
    await page.getByRole("button", { name: "Regenerate answer" }).click();
    await page.getByText("Answer B2").waitFor();
    await idle();
    expect(await answers()).toEqual(["Answer A1", "Answer B2"]);
    expect(await humans()).toEqual(["first question", "second question"]);

    // only the latest question offers Edit
    expect(await page.getByRole("button", { name: "Edit message" }).count()).toBe(1);
    await page.getByRole("button", { name: "Edit message" }).click();
    await page.getByRole("textbox", { name: "Edit message" }).fill("second question, edited");
    await page.getByRole("button", { name: "Send edit" }).click();
    await page.getByText("Answer C").waitFor();
    await idle();
    expect(await humans()).toEqual(["first question", "second question, edited"]);
    expect(await answers()).toEqual(["Answer A1", "Answer C"]);
    const parent = new URL(page.url()).searchParams.get("thread");
    // the reload shows the same conversation: the superseded runs are hidden
    await page.reload();
    await page.getByText("Answer C").waitFor();
    expect(await answers()).toEqual(["Answer A1", "Answer C"]);

    // branch from the first answer: a new thread holding only the first turn, linked back to its parent
    await page.getByRole("button", { name: "Branch from here" }).first().click();
    await page.waitForFunction((p) => new URLSearchParams(location.search).get("thread") !== p, parent);
    await page.getByRole("button", { name: "← Parent conversation" }).waitFor();
    await expect.poll(answers).toEqual(["Answer A1"]);
    await send("branch question");
    await page.getByText("Branch answer").waitFor();
    await idle();
    const branchId = new URL(page.url()).searchParams.get("thread");
    await page.getByRole("button", { name: "← Parent conversation" }).click();
    await page.getByText("Answer C").waitFor();
    await page.locator(`[data-testid="branches"] [data-branch="${branchId}"]`).waitFor();
  });

  it("opens the Agents page from the top bar, creates an agent and chats with it (its soul reaches the model)", async () => {
    await page.goto(`${url}/`);
    await page.getByRole("button", { name: "Agents" }).click();
    await page.getByRole("button", { name: "New agent" }).click();
    const form = page.getByRole("form", { name: "New agent" });
    await form.getByLabel("Name").fill("helper");
    await form.getByLabel(/Soul/).fill("You are Helper, a patient tutor.");
    await form.getByRole("button", { name: "Create" }).click();
    await page.locator('[data-agent="helper"]').getByRole("button", { name: "Chat" }).click();
    await page.getByTestId("agent-chip").filter({ hasText: "Agent: helper" }).waitFor();
    await send("teach me");
    await page.getByText("Agent answer").waitFor();
    const prompt = JSON.stringify(model.requests.at(-1)!.messages.filter((m) => m.type === "system").map((m) => m.content));
    expect(prompt).toContain("You are Helper, a patient tutor.");
    // a reload keeps the agent: the thread's metadata names it
    await idle();
    await page.reload();
    await page.getByTestId("agent-chip").filter({ hasText: "Agent: helper" }).waitFor();
  });
});
