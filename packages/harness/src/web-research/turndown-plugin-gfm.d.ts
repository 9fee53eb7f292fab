// The GFM plugin ships without type declarations; only `gfm` is used here.
declare module "@joplin/turndown-plugin-gfm" {
  import type TurndownService from "turndown";

  /** Tables, strikethrough and task-list rules for turndown. */
  export const gfm: TurndownService.Plugin;
}
