/**
 * Test-only entry: renders one page component alone (`?page=skills`), with
 * the app's styles, so a page can be driven in Chromium against the real
 * gateway before (or independently of) the app's navigation.
 */
import { StrictMode } from "react";
import type { ReactElement } from "react";
import { createRoot } from "react-dom/client";
import { AgentsPage } from "../../../src/pages/AgentsPage";
import { MemoryPage } from "../../../src/pages/MemoryPage";
import { SkillsPage } from "../../../src/pages/SkillsPage";
import "../../../src/styles.css";

// Callbacks that leave the page write the document title, which the tests read.
const PAGES: Record<string, () => ReactElement> = {
  skills: () => <SkillsPage onClose={() => (document.title = "closed")} />,
  memory: () => <MemoryPage onClose={() => (document.title = "closed")} />,
  agents: () => (
    <AgentsPage models={[{ name: "scripted", model: "scripted", display_name: "Scripted", description: null, supports_thinking: false, supports_reasoning_effort: false }]} onChat={(name) => (document.title = `chat:${name}`)} onClose={() => (document.title = "closed")} />
  ),
};

const name = new URLSearchParams(location.search).get("page") ?? "";
const Page = PAGES[name] ?? (() => <p>Unknown page '{name}'. Known: {Object.keys(PAGES).join(", ")}</p>);
createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <Page />
  </StrictMode>,
);
