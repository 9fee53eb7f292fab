import type { ComponentType } from "react";
import { McpPage } from "./McpPage";
import { MemoryPage } from "./MemoryPage";
import { SkillsPage } from "./SkillsPage";

/** A page shown in place of the conversation at `#/<path>` (the Agents page has its own route: it opens chats). */
export interface AppPage {
  hash: string;
  label: string;
  component: ComponentType<{ onClose(): void }>;
}

/** The pages of the top bar, in display order. */
export const PAGES: readonly AppPage[] = [
  { hash: "#/skills", label: "Skills", component: SkillsPage },
  { hash: "#/mcp", label: "MCP", component: McpPage },
  { hash: "#/memory", label: "Memory", component: MemoryPage },
];
