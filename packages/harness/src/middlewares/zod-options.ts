import { z } from "zod";
import { ConfigError } from "../errors";

/**
 * Validate middleware options with a zod schema at construction time.
 * A failure becomes a {@link ConfigError} naming the offending option(s),
 * e.g. `LLMErrorHandlingMiddleware: invalid option 'retry_max_attempts': …`.
 */
export function parseMiddlewareOptions<S extends z.ZodType>(
  middlewareName: string,
  schema: S,
  options: unknown,
): z.output<S> {
  const result = schema.safeParse(options ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => {
    const key = i.path.length ? i.path.map(String).join(".") : "(options)";
    return { key, message: i.message };
  });
  const text = issues.map((i) => `'${i.key}': ${i.message}`).join("; ");
  throw new ConfigError(`${middlewareName}: invalid option ${text}`, {
    code: "middleware_options_invalid",
    details: { middleware: middlewareName, options: issues.map((i) => i.key), issues },
  });
}
