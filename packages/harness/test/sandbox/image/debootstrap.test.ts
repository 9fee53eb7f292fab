import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { buildImageFromDebootstrap, hostAptSource, parseAptSources } from "../../../src/sandbox/image";
import { dockerAvailable, runHardened } from "./helpers";

describe("apt sources", () => {
  it("reads the main archive from deb822 stanzas and one-line lists, skipping security and deb-src", () => {
    const deb822 = [
      "Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\nComponents: main\n",
      "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n",
      "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n",
    ].join("\n");
    expect(parseAptSources([deb822])).toEqual({ mirror: "http://mirror.example/debian", suite: "bookworm" });
    const list = "deb http://security.debian.org/debian-security bookworm-security main\ndeb [arch=amd64] http://ftp.example/debian bookworm main\n";
    expect(parseAptSources([list])).toEqual({ mirror: "http://ftp.example/debian", suite: "bookworm" });
    expect(parseAptSources([""])).toEqual({ mirror: undefined, suite: undefined });
  });

  it("gives this host's mirror and suite, with Debian's defaults", () => {
    const src = hostAptSource();
    expect(src.mirror).toMatch(/^https?:\/\//);
    expect(src.suite).toMatch(/^[a-z]+$/);
  });
});

describe("buildImageFromDebootstrap refusals", () => {
  it.skipIf(process.getuid?.() === 0)("needs root", async () => {
    await expect(buildImageFromDebootstrap({ tag: "deerflow-test-never-built:4" })).rejects.toMatchObject({ code: "sandbox_image_build_failed", message: expect.stringContaining("debootstrap needs root") });
  });
});

// Downloads a few hundred MB from the Debian mirror and takes minutes: only on request.
const RUN = process.env.DEERFLOW_TEST_DEBOOTSTRAP === "1";
if (!RUN) console.warn("[debootstrap image test] SKIPPING the real debootstrap build: set DEERFLOW_TEST_DEBOOTSTRAP=1 (root, debootstrap installed, the apt mirror reachable)");
describe.skipIf(!RUN || !dockerAvailable("debootstrap image test"))("buildImageFromDebootstrap (real mirror, real Docker)", () => {
  it("builds a Debian whose python3 and pip run as uid 1000 on a read-only root", async () => {
    const tag = "deerflow-test-debootstrap:bookworm";
    const built = await buildImageFromDebootstrap({ tag });
    expect(built.method).toBe("debootstrap");
    expect(runHardened(tag, ["python3", "-c", "print(1)"])).toMatchObject({ status: 0, stdout: "1\n" });
    expect(runHardened(tag, ["id", "-un"])).toMatchObject({ status: 0, stdout: "sandbox\n" });
    expect(runHardened(tag, ["cat", "/etc/debian_version"]).status).toBe(0);
    expect((await buildImageFromDebootstrap({ tag })).reused).toBe(true);
    expect(spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status).toBe(0);
  }, 1_200_000);
});
