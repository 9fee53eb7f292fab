import { DeerFlowError } from "../errors";
import type { MemoryDocument, MemoryService } from "../memory";

/** Memory is turned off (`memory.enabled: false`) or failed to start. */
export class MemoryUnavailableError extends DeerFlowError {
  constructor() {
    super("memory_unavailable", "Memory is not enabled for this runtime (memory.enabled is false, or it failed to start).");
  }
}

/** The runtime's memory service (see `attachMemory`). */
export function memoryOf(runtime: { extensions: { memory?: MemoryService } }): MemoryService {
  const m = runtime.extensions.memory;
  if (!m) throw new MemoryUnavailableError();
  return m;
}

/** `GET /api/memory/status`'s shape. */
export interface MemoryStatusResponse {
  config: ReturnType<MemoryService["configResponse"]>;
  data: MemoryDocument;
}
