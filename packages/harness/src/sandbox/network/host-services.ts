/**
 * Ports where this process serves DeerFlow itself (the gateway API). The
 * egress policy refuses them on every address of this machine in every
 * mode, even when `allow_private` names the exact IP: an entry such as
 * `127.0.0.1` meant for a local database must not hand the sandbox the API
 * that adds MCP servers (host code), reads other threads and writes memory.
 */
const ports = new Map<number, number>();

/**
 * Mark `port` as a DeerFlow service of this machine for as long as the
 * returned function has not been called (counted, so two gateways on one
 * port in tests release independently).
 */
export function protectHostPort(port: number): () => void {
  ports.set(port, (ports.get(port) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const n = (ports.get(port) ?? 1) - 1;
    if (n <= 0) ports.delete(port);
    else ports.set(port, n);
  };
}

/** The ports currently marked by {@link protectHostPort}. */
export function protectedHostPorts(): ReadonlySet<number> {
  return new Set(ports.keys());
}
