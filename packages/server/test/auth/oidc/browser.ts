/**
 * A tiny cookie-keeping HTTP client that follows redirects by hand, so a test
 * can walk the sign-in round trip (gateway → provider → gateway → frontend)
 * and look at every hop. All hosts are 127.0.0.1, and cookies ignore ports,
 * so one jar serves the gateway and the provider double alike.
 */

/** A cookie as the jar keeps it, with the attributes the tests check. */
export interface JarCookie {
  name: string;
  value: string;
  path: string;
  attributes: Record<string, string | true>;
}

/** One answered request. */
export interface Hop {
  url: string;
  status: number;
  location: string | null;
  setCookies: string[];
}

function parseSetCookie(header: string, requestUrl: URL): JarCookie | null {
  const [pair, ...attrs] = header.split(";");
  const eq = pair.indexOf("=");
  if (eq <= 0) return null;
  const attributes: Record<string, string | true> = {};
  for (const a of attrs) {
    const i = a.indexOf("=");
    const key = (i < 0 ? a : a.slice(0, i)).trim().toLowerCase();
    if (key) attributes[key] = i < 0 ? true : a.slice(i + 1).trim();
  }
  const defaultPath = requestUrl.pathname.replace(/\/[^/]*$/, "") || "/";
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), path: typeof attributes.path === "string" ? attributes.path : defaultPath, attributes };
}

function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

export class Browser {
  /** Keyed by `name path`. */
  readonly jar = new Map<string, JarCookie>();
  readonly hops: Hop[] = [];

  /** The cookie named `name` (any path), if the jar holds one. */
  cookie(name: string): JarCookie | undefined {
    return [...this.jar.values()].find((c) => c.name === name);
  }

  /** Put a cookie in the jar (a test replaying or forging one). */
  setCookie(cookie: JarCookie): void {
    this.jar.set(`${cookie.name} ${cookie.path}`, cookie);
  }

  deleteCookie(name: string): void {
    for (const [k, c] of this.jar) if (c.name === name) this.jar.delete(k);
  }

  private cookieHeader(url: URL): string {
    return [...this.jar.values()]
      .filter((c) => pathMatches(c.path, url.pathname))
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  private store(setCookies: string[], url: URL): void {
    for (const h of setCookies) {
      const c = parseSetCookie(h, url);
      if (!c) continue;
      const key = `${c.name} ${c.path}`;
      const maxAge = c.attributes["max-age"];
      const expires = c.attributes.expires;
      const gone = (typeof maxAge === "string" && Number(maxAge) <= 0) || (typeof expires === "string" && Date.parse(expires) < Date.now());
      if (gone) this.jar.delete(key);
      else this.jar.set(key, c);
    }
  }

  /** One GET without following redirects (cookies sent and stored). */
  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const u = new URL(url);
    const cookie = this.cookieHeader(u);
    const res = await fetch(u, { redirect: "manual", headers: { ...headers, ...(cookie ? { cookie } : {}) } });
    const setCookies = res.headers.getSetCookie();
    this.store(setCookies, u);
    this.hops.push({ url, status: res.status, location: res.headers.get("location"), setCookies });
    return res;
  }

  /**
   * GET `url` and follow redirects while they point at one of `origins`
   * (the gateway and the provider), at most `maxHops` times. Returns the
   * last answer and, when it is a redirect elsewhere (the frontend), its
   * absolute target.
   */
  async follow(url: string, origins: string[], maxHops = 8): Promise<{ res: Response; location: string | null }> {
    let current = url;
    for (let i = 0; i < maxHops; i++) {
      const res = await this.get(current);
      const loc = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !loc) return { res, location: null };
      const next = new URL(loc, current);
      if (!origins.includes(next.origin) || next.pathname.startsWith("/login") || !/^\/(api|authorize|token)/.test(next.pathname)) {
        await res.body?.cancel();
        return { res, location: loc };
      }
      await res.body?.cancel();
      current = next.toString();
    }
    throw new Error(`more than ${maxHops} redirects from ${url}`);
  }
}
