import type { ComponentType } from "react";
import { isAdmin } from "../auth/session";
import type { Session } from "../auth/session";
import { AccountPage } from "./AccountPage";
import { McpPage } from "./McpPage";
import { MemoryPage } from "./MemoryPage";
import { SkillsPage } from "./SkillsPage";
import { UsersPage } from "./UsersPage";

/** Who may see a page. */
export type PageAudience = "everyone" | "admin" | "signed-in" | "signed-in-admin";

/** A page shown in place of the conversation at `#/<path>` (the Agents page has its own route: it opens chats). */
export interface AppPage {
  hash: string;
  label: string;
  component: ComponentType<{ onClose(): void }>;
  /**
   * `admin`: server-wide settings (MCP servers, installing and managing skills), never shown to a
   * `user`. `signed-in`: only with sign-in on (auth-disabled mode has no account to manage).
   */
  audience: PageAudience;
}

/** The pages of the top bar, in display order. */
export const PAGES: readonly AppPage[] = [
  { hash: "#/skills", label: "Skills", component: SkillsPage, audience: "admin" },
  { hash: "#/mcp", label: "MCP", component: McpPage, audience: "admin" },
  { hash: "#/memory", label: "Memory", component: MemoryPage, audience: "everyone" },
  { hash: "#/users", label: "Users", component: UsersPage, audience: "signed-in-admin" },
  { hash: "#/account", label: "Account", component: AccountPage, audience: "signed-in" },
];

/** Whether `session` may see `page` (the gateway enforces the same; this only keeps the UI honest). */
export function pageVisible(page: Pick<AppPage, "audience">, session: Session | undefined): boolean {
  const signedIn = session?.authEnabled === true;
  switch (page.audience) {
    case "everyone":
      return true;
    case "admin":
      return isAdmin(session);
    case "signed-in":
      return signedIn;
    case "signed-in-admin":
      return signedIn && isAdmin(session);
  }
}

/** The pages `session` sees, in display order. */
export function visiblePages(session: Session | undefined): AppPage[] {
  return PAGES.filter((p) => pageVisible(p, session));
}
