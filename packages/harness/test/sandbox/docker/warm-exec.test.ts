import { afterAll, describe, expect, it } from "vitest";
import type { DockerSandbox } from "../../../src/sandbox/docker";
import { dockerFixture } from "./provider-fixture";
import type { DockerFixture } from "./provider-fixture";
import { dockerTestsEnabled } from "./test-image";

const enabled = dockerTestsEnabled();

describe.skipIf(!enabled)("Docker sandbox: the next command's exec is started ahead (real Docker)", () => {
  let fx: DockerFixture;
  let sb: DockerSandbox;
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("runs the next command in the prepared exec, byte for byte, as the sandbox uid in the workspace with the sandbox env", async () => {
    fx = dockerFixture({ environment: { DF_MARK: "m1" } });
    sb = fx.provider.get(await fx.provider.acquire("warm"))! as DockerSandbox;
    expect((await sb.executeCommand("true")).exitCode).toBe(0);
    const before = { ...sb.execStats };
    // Quotes, $, backslashes, a blank line, a line of only spaces, no trailing newline: all reach sh unchanged.
    const command = ["printf '%s|%s|%s\\n' \"$(id -u)\" \"$PWD\" \"$DF_MARK\"", "x='a\\b $HOME'", "", "   ", 'printf "%s\\n" "$x"; echo "end" >&2; exit 7'].join("\n");
    const res = await sb.executeCommand(command);
    expect(sb.execStats.warm).toBe(before.warm + 1);
    expect(res.stdout).toBe(`${fx.provider.runAs.uid}|/mnt/user-data/workspace|m1\na\\b $HOME\n`);
    expect(res.stderr).toBe("end\n");
    expect(res.exitCode).toBe(7);
    expect(fx.provider.runAs.uid).not.toBe(0);
  });

  it("a command with its own env runs in a fresh exec and sees it; two at once both run", async () => {
    const cold = sb.execStats.cold;
    const res = await sb.executeCommand('echo "$EXTRA"', { env: { EXTRA: "from-caller" } });
    expect(res.stdout).toBe("from-caller\n");
    expect(sb.execStats.cold).toBe(cold + 1);
    const [a, b] = await Promise.all([sb.executeCommand("echo a"), sb.executeCommand("echo b")]);
    expect([a.stdout, b.stdout]).toEqual(["a\n", "b\n"]);
  });

  it("timeout and cancellation kill the whole group of a command in a prepared exec", async () => {
    await sb.executeCommand("true");
    const warm = sb.execStats.warm;
    const slow = await sb.executeCommand("sleep 30 & sleep 31; echo never", { timeoutMs: 500 });
    expect(sb.execStats.warm).toBe(warm + 1);
    expect(slow.timedOut).toBe(true);
    expect(slow.stdout).not.toContain("never");
    const ctl = new AbortController();
    const cancelled = sb.executeCommand("echo go > /tmp/go-warm; sleep 33; echo never", { signal: ctl.signal });
    for (let i = 0; i < 400 && (await sb.executeCommand("cat /tmp/go-warm 2>/dev/null")).stdout !== "go\n"; i++);
    ctl.abort();
    expect((await cancelled).stdout).not.toContain("never");
    const left = await sb.executeCommand("ps -eo args | grep -c '^sleep 3[013]' || true");
    expect(left.stdout.trim()).toBe("0");
  });

  it("an exec prepared and never used runs nothing and ends when discarded; none is left once the sandbox is released", async () => {
    const id = fx.provider.sandboxId("warm");
    const container = fx.provider.containerOf(id)!.containerId!;
    const engine = fx.provider.engine;
    // Waiting wrappers (the pattern's [c] keeps this probe's own command line from matching).
    const waiting = async () => Number((await engine.execArgv(container, ["/bin/sh", "-c", "ps -eo args | grep -c 'deerflow-exe[c]' || true"], { timeoutMs: 10_000, maxOutputBytes: 4096 })).stdout.trim());
    const settle = async (want: number) => {
      let n = await waiting();
      for (let i = 0; i < 200 && n !== want; i++) n = await waiting();
      return n;
    };
    await sb.executeCommand("true");
    // The sandbox's own prepared exec for its next command waits in the container.
    expect(await settle(1)).toBe(1);
    const prepared = await engine.prepareExec(container, { user: `${fx.provider.runAs.uid}:${fx.provider.runAs.gid}`, maxOutputBytes: 4096 });
    expect(prepared.usable).toBe(true);
    expect(await settle(2)).toBe(2);
    prepared.discard();
    expect(prepared.usable).toBe(false);
    expect(await settle(1)).toBe(1);
    await fx.provider.shutdown();
    expect(await engine.inspectContainer(container)).toBeNull();
  });
});
