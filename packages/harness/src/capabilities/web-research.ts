import { resolveWebToolEntry, webToolUses } from "../web-research";
import type { Capability } from "./types";

/**
 * Web research: `web_search`, `web_fetch` and `image_search` from `tools:`
 * entries (DeerFlow's community class paths and our `web:` ids), resolved in
 * the order the config lists them. No service and no chain slot: the
 * fetched text is framed by the tools and neutralized by
 * ToolResultSanitization, which every chain runs.
 */
export const webResearchCapability: Capability<never, "web_research"> = {
  name: "web_research",
  configTools: {
    uses: webToolUses,
    resolve: (entry, index, context) => resolveWebToolEntry(entry, index, context),
  },
};
