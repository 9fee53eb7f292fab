import { z } from "zod";
import { ConfigError } from "../errors";
import type { GuardrailDecision, GuardrailProvider, GuardrailRequest } from "./types";

/** Reason code of a denied tool. */
export const REASON_TOOL_NOT_ALLOWED = "oap.tool_not_allowed";
/** Reason code of an allowed tool. */
export const REASON_ALLOWED = "oap.allowed";

const optionsSchema = z.object({
  allowed_tools: z.array(z.string()).nullish(),
  denied_tools: z.array(z.string()).nullish(),
});

/** Options of {@link AllowlistProvider} (the provider `config:` of `guardrails:`). */
export type AllowlistProviderOptions = z.input<typeof optionsSchema>;

/**
 * Built-in allowlist/denylist provider. `allowed_tools` absent → every tool
 * is allowed unless denied; an explicitly empty `allowed_tools: []` allows
 * nothing (never fails open).
 */
export class AllowlistProvider implements GuardrailProvider {
  readonly name = "allowlist";
  private readonly allowed: ReadonlySet<string> | null;
  private readonly denied: ReadonlySet<string>;

  constructor(options: AllowlistProviderOptions = {}) {
    const parsed = optionsSchema.safeParse(options ?? {});
    if (!parsed.success) {
      const key = parsed.error.issues[0]?.path.map(String).join(".") || "(options)";
      throw new ConfigError(`AllowlistProvider: invalid option '${key}': ${parsed.error.issues[0]?.message}`, {
        code: "guardrail_options_invalid",
        details: { option: key },
      });
    }
    this.allowed = parsed.data.allowed_tools != null ? new Set(parsed.data.allowed_tools) : null;
    this.denied = new Set(parsed.data.denied_tools ?? []);
  }

  evaluate(request: GuardrailRequest): GuardrailDecision {
    if (this.allowed && !this.allowed.has(request.tool_name)) {
      return {
        allow: false,
        reasons: [{ code: REASON_TOOL_NOT_ALLOWED, message: `tool '${request.tool_name}' not in allowlist` }],
      };
    }
    if (this.denied.has(request.tool_name)) {
      return { allow: false, reasons: [{ code: REASON_TOOL_NOT_ALLOWED, message: `tool '${request.tool_name}' is denied` }] };
    }
    return { allow: true, reasons: [{ code: REASON_ALLOWED }] };
  }
}
