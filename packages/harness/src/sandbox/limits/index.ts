/**
 * Per-sandbox resource limits: cgroups (v2 or v1) for processes, memory and
 * CPU with an rlimit fallback, the size of `/tmp`, and the per-thread disk
 * quota. See docs/sandbox.md ("Limits").
 */
export { CGROUP_PARENT_NAME, detectCgroups, SandboxCgroup } from "./cgroups";
export type { CgroupController, CgroupLimits, CgroupSupport } from "./cgroups";
export {
  assertThreadDiskQuota,
  formatBytes,
  MAX_QUOTA_ENTRIES,
  measureDiskUsage,
  QUOTA_POLL_MIN_MS,
  ThreadDiskQuota,
  threadDiskQuota,
} from "./disk-quota";
export type { DiskUsage } from "./disk-quota";
export { bwrapSupportsTmpSize, describeSandboxLimits, resolveSandboxLimits } from "./effective";
export type { EffectiveLimits, LimitEnforcement, ResolveLimitsOptions, SandboxLimitsReport } from "./effective";
