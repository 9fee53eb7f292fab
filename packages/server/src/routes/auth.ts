import type { Hono } from "hono";
import type { GatewayContext } from "../context";

/**
 * Auth endpoints in auth-disabled mode (`DEER_FLOW_AUTH_DISABLED=1` or no
 * auth configured): every request is the default admin user.
 */
export function registerAuthRoutes(app: Hono, ctx: GatewayContext): void {
  const me = () => ({
    id: ctx.options.userId,
    email: `${ctx.options.userId}@test.local`,
    system_role: "admin",
    needs_setup: false,
    oauth_provider: null,
  });
  app.get("/v1/auth/me", (c) => c.json(me()));
  app.get("/v1/auth/setup-status", (c) => c.json({ needs_setup: false, registration_enabled: false }));
  app.get("/v1/auth/providers", (c) => c.json({ providers: [] }));
  app.post("/v1/auth/logout", (c) => c.json({ success: true }));
}
