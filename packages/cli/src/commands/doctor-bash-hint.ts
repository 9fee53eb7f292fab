import { LOCAL_PROVIDER_NAMES, probeBwrapDataDir, sandboxRunAs } from "@deerflow-ts/harness/sandbox";
import type { SandboxConfig } from "@deerflow-ts/harness/sandbox";
import type { Finding } from "./doctor";

/**
 * Why bash is configured but the agent does not get it, with the fix that
 * applies here. "Install bubblewrap" is only said when bubblewrap is missing:
 * with it installed, bash is off either because `sandbox.use` picks the local
 * (host) provider, or because bubblewrap cannot start a sandbox with this data
 * dir — and then the probe's own reason is given.
 */
export function bashOffFinding(config: SandboxConfig, dataDir: string, bwrapPath: string | undefined): Finding {
  const use = config.use?.trim() ?? "";
  const message = "bash is configured but off";
  if (LOCAL_PROVIDER_NAMES.has(use)) {
    return {
      check: "tools",
      level: "warn",
      message: `${message}: sandbox.use is '${use}' (commands would run on the host without isolation) and sandbox.allow_host_bash is false`,
      fix: bwrapPath
        ? `bubblewrap is installed (${bwrapPath}): set sandbox.use: bwrap to give the agent an isolated bash (or allow_host_bash: true to run it on the host).`
        : "Install bubblewrap (apt-get install bubblewrap / dnf install bubblewrap) and set sandbox.use: bwrap, or set allow_host_bash: true to run bash on the host.",
    };
  }
  if (!bwrapPath) {
    return {
      check: "tools",
      level: "warn",
      message: `${message}: bubblewrap (bwrap) is not on PATH, so commands would run on the host without isolation`,
      fix: "Install bubblewrap (apt-get install bubblewrap / dnf install bubblewrap) to give the agent an isolated bash.",
    };
  }
  const probe = probeBwrapDataDir({ baseDir: dataDir, runAs: sandboxRunAs(config), bwrapPath });
  return {
    check: "tools",
    level: "warn",
    message: `${message}: bubblewrap at ${bwrapPath} is installed but cannot start a sandbox here: ${probe.ok ? "it started in the check just now; re-run doctor" : probe.reason}`,
    fix: probe.blocker
      ? `Move the data dir (--data-dir) out of ${probe.blocker}, or install util-linux (unshare, mount).`
      : "See the sandbox finding below for what blocks bubblewrap (user namespaces, data dir permissions).",
  };
}
