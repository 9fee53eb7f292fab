import { spawnSync } from "node:child_process";
import { buildImageFromHost } from "../../../src/sandbox/image";

/** Label on every container these tests start (afterAll removes by it). */
export const TEST_LABEL = "deerflow.test.image";

/**
 * Whether Docker-backed image tests run: false with a printed notice when `docker info` fails,
 * except under DEERFLOW_REQUIRE_DOCKER=1 (CI), where an unreachable daemon fails the file.
 */
export function dockerAvailable(what: string): boolean {
  const res = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 15_000 });
  if (res.status === 0 && res.stdout.trim()) return true;
  if (process.env.DEERFLOW_REQUIRE_DOCKER === "1") throw new Error(`DEERFLOW_REQUIRE_DOCKER=1 but the Docker daemon is not reachable (docker info: ${(res.stderr || res.error?.message || "").trim()})`);
  console.warn(`[${what}] SKIPPING: the Docker daemon is not reachable (docker info failed)`);
  return false;
}

/** A small image of this host's sh and sleep (what the provider needs), built once and reused by content. */
export async function minimalHostImage(): Promise<string> {
  const ref = "deerflow-test-minimal:host";
  await buildImageFromHost({ tag: ref, rootfs: { programs: ["sh", "sleep", "cat", "id"] } });
  return ref;
}

/** `docker run --rm` with the sandbox's hardening; returns the exit status and output. */
export function runHardened(image: string, argv: string[], user = "1000:1000"): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(
    "docker",
    ["run", "--rm", "--label", `${TEST_LABEL}=1`, "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--network", "none", "--pids-limit", "64", "--memory", "256m", "--user", user, image, ...argv],
    { encoding: "utf8", timeout: 60_000 },
  );
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** Remove every container these tests labelled (none should be left; this is the safety net). */
export function removeTestContainers(): void {
  const ids = spawnSync("docker", ["ps", "-aq", "--filter", `label=${TEST_LABEL}`], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  if (ids.length) spawnSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
}
