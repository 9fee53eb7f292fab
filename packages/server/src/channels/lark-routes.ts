import fs from "node:fs";
import path from "node:path";
import type { Hono } from "hono";
import { z } from "zod";
import { requireAdmin } from "../auth";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { readJson } from "../validate";
import type { ChannelsHost } from "./channels-host";

const credentialsBody = z.object({ app_id: z.string().min(1), app_secret: z.string().min(1), brand: z.enum(["feishu", "lark"]).default("feishu") });

const DOMAINS = { feishu: "https://open.feishu.cn", lark: "https://open.larksuite.com" } as const;
const CLI_MISSING = "lark-cli is not installed on this server: put it on the server's PATH to use the Lark skill pack. The Feishu/Lark chat channel needs only channels.feishu.";

/** `lark-cli` on the server's PATH, if any. */
function findLarkCli(): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, "lark-cli");
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/**
 * DeerFlow's Settings → Integrations → Lark routes. The chat side is the
 * Feishu channel: `status` tells whether its app credentials are set, and
 * `config/credentials` sets them (admin) and restarts the channel. The
 * skill pack DeerFlow installs through `lark-cli` is not bundled here:
 * `status` says so, and the routes that drive `lark-cli` answer 404 with
 * what is missing (DeerFlow's answer when the CLI is absent).
 */
export function registerLarkIntegrationRoutes(api: Hono, _ctx: GatewayContext, host: ChannelsHost): void {
  const status = async () => {
    const manager = await host.get();
    const feishu = manager.section().feishu;
    const cli = findLarkCli();
    const configured = Boolean(feishu?.app_id && feishu?.app_secret);
    const domain = feishu?.domain || DOMAINS.feishu;
    return {
      installed: false,
      version: "",
      manifest_version: null,
      latest_available_version: null,
      runtime_version_mismatch: false,
      app_configured: configured,
      app_id: configured ? feishu!.app_id : null,
      app_brand: configured ? (domain.includes("larksuite") ? "lark" : "feishu") : null,
      skills_expected: 0,
      skills_installed: 0,
      installed_skills: [],
      enabled_skills: [],
      install_path: "",
      cli: { available: cli !== null, path: null, version: null, error: cli ? null : "lark-cli not found on PATH" },
      auth: { status: configured ? "not_authorized" : "not_configured", message: null, user: null, verified: false },
      sandbox_runtime_mode: "none",
      sandbox_runtime_ready: false,
      sandbox_runtime_detail: null,
    };
  };

  api.get("/integrations/lark/status", async (c) => c.json(await status()));

  api.post("/integrations/lark/install", (c) => {
    requireAdmin(c, "Admin privileges required to install integrations.");
    throw new HttpError(404, CLI_MISSING);
  });

  for (const route of ["/integrations/lark/config/start", "/integrations/lark/config/complete", "/integrations/lark/auth/start", "/integrations/lark/auth/complete"]) {
    api.post(route, () => {
      throw new HttpError(404, CLI_MISSING);
    });
  }

  api.post("/integrations/lark/config/credentials", async (c) => {
    requireAdmin(c, "Admin privileges required to manage channel runtime credentials.");
    const body = await readJson(c, credentialsBody, 16 * 1024);
    const manager = await host.get();
    const started = await manager.setRuntimeConfig("feishu", { enabled: true, app_id: body.app_id, app_secret: body.app_secret, domain: DOMAINS[body.brand] });
    return c.json({
      success: started,
      message: started ? "Feishu/Lark app credentials saved; the Feishu channel is running." : `Feishu/Lark app credentials saved, but the channel did not start: ${manager.status().find((s) => s.name === "feishu")?.error ?? "unknown error"}`,
      generation: "",
      status: await status(),
    });
  });
}
