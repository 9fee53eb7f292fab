import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { AllowlistProvider, REASON_ALLOWED, REASON_TOOL_NOT_ALLOWED } from "../../src/guardrails";
import type { GuardrailRequest } from "../../src/guardrails";

const req = (tool_name: string): GuardrailRequest => ({
  tool_name,
  tool_input: {},
  agent_id: null,
  thread_id: null,
  run_id: null,
  tool_call_id: null,
  user_id: null,
  user_role: null,
  oauth_provider: null,
  oauth_id: null,
  channel_user_id: null,
  is_internal: false,
  is_subagent: false,
  authz_attributes: {},
  timestamp: new Date().toISOString(),
});

describe("AllowlistProvider", () => {
  it("allows everything without lists", () => {
    expect(new AllowlistProvider().evaluate(req("bash"))).toEqual({ allow: true, reasons: [{ code: REASON_ALLOWED }] });
    expect(REASON_ALLOWED).toBe("oap.allowed");
  });

  it("denies tools on the denylist (DeerFlow's example config)", () => {
    const p = new AllowlistProvider({ denied_tools: ["bash", "write_file"] });
    expect(p.evaluate(req("bash"))).toEqual({ allow: false, reasons: [{ code: "oap.tool_not_allowed", message: "tool 'bash' is denied" }] });
    expect(p.evaluate(req("read_file")).allow).toBe(true);
  });

  it("allows only allowlisted tools; an empty allowlist allows nothing", () => {
    const p = new AllowlistProvider({ allowed_tools: ["web_search"] });
    expect(p.evaluate(req("web_search")).allow).toBe(true);
    expect(p.evaluate(req("bash"))).toEqual({ allow: false, reasons: [{ code: REASON_TOOL_NOT_ALLOWED, message: "tool 'bash' not in allowlist" }] });
    expect(new AllowlistProvider({ allowed_tools: [] }).evaluate(req("web_search")).allow).toBe(false);
  });

  it("deny wins when a tool is in both lists", () => {
    expect(new AllowlistProvider({ allowed_tools: ["bash"], denied_tools: ["bash"] }).evaluate(req("bash")).allow).toBe(false);
  });

  it("rejects malformed config", () => {
    expect(() => new AllowlistProvider({ denied_tools: "bash" as never })).toThrow(ConfigError);
  });
});
