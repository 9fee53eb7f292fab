import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRunContext } from "../../src/runtime/run-context";
import type { ToolRuntime } from "../../src/tools";
import { probeBwrap, sandboxRunAs, parseSandboxConfig } from "../../src/sandbox";

/** A fresh base dir traversable by an unprivileged sandbox uid. */
export function tempBase(prefix = "dfsbx-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o711);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Whether bwrap can run here (tests needing it skip visibly otherwise). */
export function bwrapAvailable(): boolean {
  const probe = probeBwrap({ runAs: sandboxRunAs(parseSandboxConfig({})) });
  if (!probe.ok) console.warn(`[sandbox tests] SKIPPING bubblewrap tests: ${probe.reason}`);
  return probe.ok;
}

/** A minimal ToolRuntime for calling tools directly. */
export function fakeToolRuntime(threadId: string, extra: Partial<ToolRuntime> = {}): ToolRuntime {
  return {
    state: { messages: [] },
    context: createRunContext({ threadId, runId: `run-${threadId}`, context: { user_id: "default" } }),
    toolCallId: "call-1",
    signal: new AbortController().signal,
    writer: () => {},
    interrupt: () => {
      throw new Error("no interrupt in tests");
    },
    ...extra,
  } as ToolRuntime;
}

/** Pids whose command line contains `marker`. */
export function pidsMatching(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmd.includes(marker) && Number(entry) !== process.pid) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** SIGKILL the given pids (cleanup of control-run survivors). */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
