import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { SandboxError } from "../errors";

/**
 * Remove a directory tree the agent's sandbox wrote (a thread's directory on
 * deletion). `fs.rm` walks by full path names and gives up past the host's
 * PATH_MAX (`ENAMETOOLONG`), which a sandboxed `mkdir`/`cd` loop reaches in a
 * second, so such a thread could never be deleted. The fallback is GNU `rm -rf
 * --one-file-system`, which descends by directory descriptors to any depth and
 * never crosses into another mount; it starts in `/` with a minimal
 * environment, like every process the harness starts on the host.
 * @throws SandboxError (`tree_remove_failed`) naming the directory when even that fails.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENAMETOOLONG" && code !== "ELOOP" && code !== "ENOTEMPTY" && code !== "EMFILE") throw err;
  }
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn("rm", ["-rf", "--one-file-system", "--", dir], { cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString("utf8");
    });
    child.on("error", (e) => resolve({ code: -1, stderr: e.message }));
    child.on("close", (c) => resolve({ code: c, stderr }));
  });
  if (result.code !== 0) {
    throw new SandboxError(`Could not remove ${dir}: ${result.stderr.trim() || `rm exited with ${result.code}`}`, { code: "tree_remove_failed", details: { dir } });
  }
}
