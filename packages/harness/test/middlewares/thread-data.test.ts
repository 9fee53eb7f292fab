import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, ValidationError } from "../../src/errors";
import { createThreadDataMiddleware } from "../../src/middlewares/thread-data";
import { tempBase } from "../sandbox/helpers";
import { hookRuntime } from "./_sandbox-fixtures";

const b = tempBase("dftd-");
afterAll(() => b.cleanup());

describe("ThreadDataMiddleware", () => {
  it("validates options", () => {
    expect(() => createThreadDataMiddleware({} as never)).toThrow(ConfigError);
  });
  it("writes host paths for the run's user, lazily", async () => {
    const mw = createThreadDataMiddleware({ base_dir: b.dir });
    const r = (await mw.beforeAgent!({ messages: [] }, hookRuntime("t1", "alice"))) as { thread_data: Record<string, string> };
    expect(r.thread_data.workspace_path).toBe(`${b.dir}/users/alice/threads/t1/user-data/workspace`);
    expect(r.thread_data.outputs_path).toBe(`${b.dir}/users/alice/threads/t1/user-data/outputs`);
    expect(existsSync(r.thread_data.workspace_path)).toBe(false);
    expect(await mw.beforeAgent!({ messages: [], thread_data: r.thread_data }, hookRuntime("t1", "alice"))).toBeUndefined();
  });
  it("creates directories when lazy_init is false, and rejects bad ids", async () => {
    const mw = createThreadDataMiddleware({ base_dir: b.dir, lazy_init: false });
    const r = (await mw.beforeAgent!({ messages: [] }, hookRuntime("t2"))) as { thread_data: Record<string, string> };
    expect(existsSync(r.thread_data.uploads_path)).toBe(true);
    await expect(Promise.resolve(mw.beforeAgent!({ messages: [] }, hookRuntime("t2", "../root")))).rejects.toThrow(ValidationError);
  });
});
