import { errorMessage } from "../errors";
import type { AnyCapability, CapabilityAttachOptions, CapabilityHost, CapabilityRunHook } from "./types";

/** What the attach loop needs from the runtime on top of {@link CapabilityHost}: where services and hooks go. */
export interface CapabilityRuntime extends CapabilityHost {
  readonly extensions: object;
  readonly recorder: { addHook(hook: CapabilityRunHook): void };
  onClose(hook: () => void | Promise<void>): void;
  onThreadDeleted(hook: (threadId: string, userId: string) => void | Promise<void>): void;
}

/**
 * Attach capabilities to a runtime, in order: each one's service goes to
 * `runtime.extensions[name]`, its run hooks to the recorder, its
 * thread-deleted and close hooks to the runtime. A capability whose attach
 * throws is off for this runtime (one log line naming it); the others attach.
 * @returns the names of the capabilities that attached a service.
 */
export function attachCapabilities(runtime: CapabilityRuntime, capabilities: readonly AnyCapability[], options: CapabilityAttachOptions): string[] {
  const attached: string[] = [];
  for (const capability of capabilities) {
    if (!capability.attach) continue;
    try {
      const a = capability.attach(runtime, options);
      if (!a) continue;
      (runtime.extensions as Record<string, unknown>)[capability.name] = a.service;
      for (const hook of a.runHooks ?? []) runtime.recorder.addHook(hook);
      if (a.threadDeleted) runtime.onThreadDeleted(a.threadDeleted);
      if (a.close) runtime.onClose(a.close);
      attached.push(capability.name);
    } catch (err) {
      options.log(`[deerflow] ${capability.name} is off: ${errorMessage(err)}`);
    }
  }
  return attached;
}
