import { LocalServerUnavailableError, startPostgres, startRedis } from "@deerflow-ts/harness/testing";
import type { LocalServer } from "@deerflow-ts/harness/testing";

/**
 * Vitest global setup: one real PostgreSQL and one real Redis on loopback
 * for the whole test run (each test file makes its own database). Their
 * URLs reach the test workers as DEERFLOW_TEST_POSTGRES_URL and
 * DEERFLOW_TEST_REDIS_URL. Where a server is not installed its tests skip
 * with a notice, unless DEERFLOW_REQUIRE_SERVICES=1 (set by CI), which makes
 * a missing server fail the run.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const started: LocalServer[] = [];
  const require = process.env.DEERFLOW_REQUIRE_SERVICES === "1";
  const want = async (name: string, envKey: string, start: () => Promise<LocalServer>): Promise<void> => {
    if (process.env[envKey]) return; // an external server was given
    try {
      const server = await start();
      started.push(server);
      process.env[envKey] = server.url;
    } catch (err) {
      if (require || !(err instanceof LocalServerUnavailableError)) throw err;
      console.warn(`[test] ${name} tests are skipped: ${err.message}`);
    }
  };
  await Promise.all([
    want("PostgreSQL", "DEERFLOW_TEST_POSTGRES_URL", startPostgres),
    want("Redis", "DEERFLOW_TEST_REDIS_URL", startRedis),
  ]);
  return async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
}
