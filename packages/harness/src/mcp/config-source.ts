import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { parseExtensionsConfigText } from "../config/loader";
import { extensionsConfigSchema } from "../config";
import type { ConfigEnv, ExtensionsConfig } from "../config";

/**
 * Where the pool reads `mcpServers` from: a file (read, `$VAR`-resolved and
 * validated by the pool) and/or an already parsed config (then the file, if
 * named, only contributes to the change signature).
 */
export interface McpConfigSource {
  path?: string | null;
  config?: ExtensionsConfig;
}

/** A loaded config and the signature that identifies this exact content. */
export interface LoadedMcpConfig {
  config: ExtensionsConfig;
  signature: string;
  warnings: string[];
}

const sha256 = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

/**
 * Computes the change signature `path|mtime|size|sha256` (DeerFlow's cache
 * key). The file is read and hashed again only when its stat changed, so
 * checking an unchanged file costs one `stat`.
 */
export class ConfigSignatureReader {
  private stamp = "";
  private hash = "";
  private text = "";

  constructor(private readonly env: ConfigEnv = process.env) {}

  /** Read the source; throws a ConfigError when the file is unreadable or invalid. */
  load(source: McpConfigSource): LoadedMcpConfig {
    let fileSig = "no-file";
    if (source.path) {
      const st = statSync(source.path);
      const stamp = `${source.path}|${st.mtimeMs}|${st.size}`;
      if (stamp !== this.stamp) {
        const buf = readFileSync(source.path);
        this.text = buf.toString("utf8");
        this.hash = sha256(buf);
        this.stamp = stamp;
      }
      fileSig = `${this.stamp}|${this.hash}`;
    }
    if (source.config) {
      return { config: source.config, signature: `${fileSig}#${sha256(JSON.stringify(source.config))}`, warnings: [] };
    }
    if (!source.path) return { config: extensionsConfigSchema.parse({}), signature: fileSig, warnings: [] };
    const { config, warnings } = parseExtensionsConfigText(this.text, { file: source.path, env: this.env });
    // `$VAR`s resolve at load time: a changed variable only takes effect with a changed file, as in DeerFlow.
    return { config, signature: fileSig, warnings };
  }
}
