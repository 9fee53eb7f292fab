import { CONFIG_VERSION } from "./app-config-schema";

/**
 * The warning for a config file older than this code, or null when current.
 * A missing `config_version` counts as 0.
 */
export function configVersionWarning(version: number, file: string, current: number = CONFIG_VERSION): string | null {
  if (version >= current) return null;
  return (
    `${file} has config_version ${version}, older than this release's ${current}. ` +
    `New settings use their defaults until you run \`deerflow config upgrade\` ` +
    `(it merges the new default fields into your file and keeps your comments).`
  );
}
