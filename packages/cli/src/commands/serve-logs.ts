import { messageSink, observabilitySettings, openLogger } from "@deerflow-ts/server";
import type { Logger, ObservabilityConfig } from "@deerflow-ts/server";
import { Terminal } from "../io";

/** A terminal whose lines become log records: with `logging.enhance.format: json` every stdout line is one JSON object. */
class LoggingTerminal extends Terminal {
  constructor(private readonly logger: Logger) {
    super();
  }

  override write(text: string): void {
    for (const l of text.split("\n")) if (l.trim()) this.logger.info({ component: "serve" }, l);
  }

  override line(text = ""): void {
    this.write(text);
  }

  override error(text: string): void {
    const sink = messageSink(this.logger, "warn");
    for (const l of text.split("\n")) if (l.trim()) sink(l);
  }

  override startSpinner(): void {}
}

/**
 * The logger of `deerflow serve` from the config's `log_level` and
 * `logging.enhance` (defaults without a config: `info`, text), and the
 * terminal to print through: the same one in text format, one that logs every
 * line (banners included) in JSON format.
 */
export async function serveLogging(config: ObservabilityConfig | undefined, term: Terminal): Promise<{ logger: Logger; term: Terminal }> {
  const settings = observabilitySettings(config);
  const logger = await openLogger({ level: settings.level, format: settings.format });
  return { logger, term: settings.format === "json" ? new LoggingTerminal(logger) : term };
}
