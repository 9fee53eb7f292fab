/**
 * The run hook `attachSkills` installs: a user's first run waits for the
 * enabled-only view; later runs never wait for a re-check, which runs in the
 * background at most once per 2 s per user.
 */
import fs from "node:fs";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { attachSkills } from "../../src/skills";
import { tempDir } from "./helpers";

const root = tempDir("attach");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

type Hook = { name: string; runStarted?(run: { userId: string }): Promise<void> | void };

function setup() {
  const hooks: Hook[] = [];
  const logs: string[] = [];
  const host = {
    dataDir: root,
    configManager: undefined,
    extensions: {},
    recorder: { addHook: (h: Hook) => void hooks.push(h) },
    config: () => undefined,
    invalidateAgents: () => undefined,
  };
  const registry = attachSkills(host, { cwd: root, log: (m) => logs.push(m) });
  // A view check the test completes or fails by hand.
  const checks: Array<{ user: string; resolve(): void; reject(e: Error): void }> = [];
  registry.ensureView = (user: string) =>
    new Promise<string>((resolve, reject) => checks.push({ user, resolve: () => resolve(`${root}/${user}`), reject }));
  const hook = hooks.find((h) => h.name === "skills")!;
  return { hook, checks, logs };
}

/** Whether `p` settles within a few turns of the event loop. */
async function settlesSoon(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe("skills run hook", () => {
  it("a user's first run waits for the view; concurrent first runs share one check", async () => {
    const { hook, checks } = setup();
    const a = Promise.resolve(hook.runStarted!({ userId: "u1" }));
    const b = Promise.resolve(hook.runStarted!({ userId: "u1" }));
    expect(await settlesSoon(a)).toBe(false);
    expect(checks).toHaveLength(1);
    checks[0].resolve();
    await Promise.all([a, b]);
  });

  it("after the first view, a due re-check runs in the background and no run waits for it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { hook, checks } = setup();
    const first = Promise.resolve(hook.runStarted!({ userId: "u2" }));
    checks[0].resolve();
    await first;
    // Within 2 s: no new check.
    expect(await settlesSoon(Promise.resolve(hook.runStarted!({ userId: "u2" })))).toBe(true);
    expect(checks).toHaveLength(1);
    // Later: a re-check starts, and the run goes on without it.
    vi.setSystemTime(Date.now() + 2_500);
    expect(await settlesSoon(Promise.resolve(hook.runStarted!({ userId: "u2" })))).toBe(true);
    expect(checks).toHaveLength(2);
    // Runs during the re-check share it (no third check) and do not wait either.
    expect(await settlesSoon(Promise.resolve(hook.runStarted!({ userId: "u2" })))).toBe(true);
    expect(checks).toHaveLength(2);
    checks[1].resolve();
  });

  it("a failed background re-check is logged and retried by the next run, which still does not wait", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { hook, checks, logs } = setup();
    const first = Promise.resolve(hook.runStarted!({ userId: "u3" }));
    checks[0].resolve();
    await first;
    vi.setSystemTime(Date.now() + 2_500);
    await hook.runStarted!({ userId: "u3" });
    checks[1].reject(new Error("EACCES on the view dir"));
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(logs.join("\n")).toContain("EACCES on the view dir");
    expect(await settlesSoon(Promise.resolve(hook.runStarted!({ userId: "u3" })))).toBe(true);
    expect(checks).toHaveLength(3);
    checks[2].resolve();
  });

  it("a failed first check is not trusted: the next run waits for a new one", async () => {
    const { hook, checks } = setup();
    const first = Promise.resolve(hook.runStarted!({ userId: "u4" }));
    checks[0].reject(new Error("no space left"));
    await expect(first).rejects.toThrow("no space left");
    const second = Promise.resolve(hook.runStarted!({ userId: "u4" }));
    expect(await settlesSoon(second)).toBe(false);
    expect(checks).toHaveLength(2);
    checks[1].resolve();
    await second;
  });
});
