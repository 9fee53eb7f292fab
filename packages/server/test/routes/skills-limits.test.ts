import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { SkillRegistry, threadPaths } from "@deerflow-ts/harness";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const enc = (s: string) => new TextEncoder().encode(s);

describe("parser limits on the gateway (real HTTP server)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gw-limits-"));
  let gw: TestGateway;
  let api: string;
  let outputs: string;

  beforeAll(async () => {
    const dataDir = path.join(root, "data");
    const skillsPath = path.join(root, "skills");
    fs.mkdirSync(path.join(skillsPath, "public"), { recursive: true });
    gw = await startTestGateway({ dataDir, skills: new SkillRegistry({ skillsPath, dataDir, extensionsPath: path.join(root, "extensions_config.json") }) });
    api = `${gw.url}/api`;
    outputs = threadPaths(dataDir, "default", "th1").outputs;
    fs.mkdirSync(outputs, { recursive: true });
  });
  afterAll(async () => {
    await gw.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("refuses a .skill whose frontmatter has 100,000 keys in under a second while /health keeps answering", async () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `k${i}: v`).join("\n");
    fs.writeFileSync(path.join(outputs, "wide.skill"), zipSync({ "wide/SKILL.md": enc(`---\nname: wide\ndescription: Wide.\n${keys}\n---\n# Wide\n`) }));
    // The gateway runs in this process: the event loop's longest stall while the install is handled is measured directly.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const t0 = performance.now();
    const order: string[] = [];
    const install = postJson(`${api}/skills/install`, { thread_id: "th1", path: "/mnt/user-data/outputs/wide.skill" }).then(async (r) => {
      order.push("install");
      return { status: r.status, body: (await r.json()) as { detail: string } };
    });
    const health = fetch(`${gw.url}/health`).then((r) => {
      order.push("health");
      return r.status;
    });
    const [installed, healthStatus] = await Promise.all([install, health]);
    const elapsed = performance.now() - t0;
    stalls.disable();
    expect(healthStatus).toBe(200);
    expect(installed.status).toBe(400);
    expect(installed.body.detail).toMatch(/^SKILL\.md: frontmatter is \d+ bytes, over the limit of 65536 bytes$/);
    expect(order).toHaveLength(2);
    expect(elapsed).toBeLessThan(1000);
    expect(stalls.max / 1e6).toBeLessThan(500);
    expect(fs.existsSync(path.join(gw.dataDir, "users", "default", "skills", "custom", "wide"))).toBe(false);
  });

  it("refuses a JSON body nested deeper than the limit with 422 before parsing it", async () => {
    const deep = `{"enabled": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const res = await fetch(`${api}/skills/anything`, { method: "PUT", headers: { "content-type": "application/json" }, body: deep });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain("JSON nesting is deeper than the limit of 64 levels");
  });
});
