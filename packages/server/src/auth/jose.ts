let joseModule: Promise<typeof import("jose")> | undefined;

/**
 * jose, imported by the first session token or OIDC state cookie signed or read: a gateway with auth off (demo
 * mode, `DEER_FLOW_AUTH_DISABLED`) or whose clients have not signed in yet does not hold it in memory. Every
 * caller is already async, so the import is awaited once and then shared.
 */
export function loadJose(): Promise<typeof import("jose")> {
  joseModule ??= import("jose");
  return joseModule;
}
