import { describe, expect, it } from "vitest";
import { DOCKERODE_VERSION, DockerError, loadDockerode } from "../../../src/sandbox/docker";

const notFound = (id: string): never => {
  throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
};

describe("dockerode is an optional peer dependency", () => {
  it("a missing package is a DockerError naming the install command, not a raw MODULE_NOT_FOUND", () => {
    let caught: unknown;
    try {
      loadDockerode(notFound);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DockerError);
    expect((caught as DockerError).code).toBe("docker_client_missing");
    expect((caught as DockerError).message).toContain(`npm install dockerode@${DOCKERODE_VERSION}`);
    expect((caught as DockerError).message).toContain("sandbox.use");
  });

  it("any other load failure is passed through unchanged", () => {
    const broken = new SyntaxError("Unexpected token");
    expect(() =>
      loadDockerode(() => {
        throw broken;
      }),
    ).toThrow(broken);
  });

  it("the pinned version is the one the repository installs", async () => {
    const { createRequire } = await import("node:module");
    const installed = (createRequire(import.meta.url)("dockerode/package.json") as { version: string }).version;
    expect(installed).toBe(DOCKERODE_VERSION);
    expect(typeof loadDockerode()).toBe("function");
  });
});
