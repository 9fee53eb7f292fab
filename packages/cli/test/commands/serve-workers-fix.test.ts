/** The fix in `--workers N`'s refusal names only the config sections still to change. */
import { describe, expect, it } from "vitest";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { checkWorkersAllowed } from "../../src/commands/serve-workers";

const refusal = (config: unknown): string => {
  try {
    checkWorkersAllowed(2, config as AppConfig, false);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("not refused");
};

describe("serve --workers refusal: the fix", () => {
  it("PostgreSQL already set: only the stream_bridge section is asked for", () => {
    const m = refusal({ database: { backend: "postgres", postgres_url: "postgres://x@127.0.0.1/db" }, stream_bridge: { type: "memory" } });
    expect(m).toContain("Set `stream_bridge: {type: redis, redis_url: $REDIS_URL}` in config.yaml (see docs/scale-out.md), or start one worker.");
    expect(m).not.toContain("`database:");
  });

  it("Redis already set: only the database section is asked for", () => {
    const m = refusal({ database: { backend: "sqlite" }, stream_bridge: { type: "redis", redis_url: "redis://127.0.0.1:6379" } });
    expect(m).toContain("database.backend is 'sqlite' (needs 'postgres', with database.postgres_url).");
    expect(m).toContain("Set `database: {backend: postgres, postgres_url: $DATABASE_URL}` in config.yaml");
    expect(m).not.toContain("`stream_bridge:");
  });

  it("neither: both sections", () => {
    expect(refusal({})).toContain("Set `database: {backend: postgres, postgres_url: $DATABASE_URL}` and `stream_bridge: {type: redis, redis_url: $REDIS_URL}` in config.yaml");
  });
});
