/** A path into a config document: object keys and array indexes. */
export type KeyPath = ReadonlyArray<string | number | symbol>;

const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Format a key path the way users read it: `models[0].api_key`,
 * `mcpServers["my.server"].env.TOKEN`.
 */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = String(part);
      if (IDENT.test(key)) out += out ? `.${key}` : key;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out || "(root)";
}
