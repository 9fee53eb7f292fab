import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ensureWebBuild } from "../src/web-build";
import { tempDir } from "./helpers";

describe("ensureWebBuild (build the web UI on first start)", () => {
  it("does nothing when a build exists", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "packages/web/dist"), { recursive: true });
    writeFileSync(path.join(root, "packages/web/dist/index.html"), "<!doctype html>");
    const logs: string[] = [];
    expect(await ensureWebBuild({ root, log: (l) => logs.push(l) })).toEqual({ ready: true, built: false, dist: path.join(root, "packages/web/dist") });
    expect(logs).toEqual([]);
  });

  it("says why when there is no build and no web sources to build from", async () => {
    const root = tempDir();
    const r = await ensureWebBuild({ root });
    expect(r.ready).toBe(false);
    expect(r.built).toBe(false);
    expect(r.reason).toContain(`its sources are not in ${path.join(root, "packages/web")}`);
  });

  it("reports a failed build with the command to run, never throwing", async () => {
    const root = tempDir();
    // A workspace whose web package build fails (its build script exits 3).
    writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "r", private: true, workspaces: ["packages/web"] }));
    mkdirSync(path.join(root, "packages/web/src"), { recursive: true });
    writeFileSync(path.join(root, "packages/web/index.html"), "<!doctype html>");
    writeFileSync(path.join(root, "packages/web/package.json"), JSON.stringify({ name: "@deerflow-ts/web", version: "0.0.0", scripts: { build: "exit 3" } }));
    const logs: string[] = [];
    const r = await ensureWebBuild({ root, log: (l) => logs.push(l) });
    expect(logs).toEqual(["Building the web UI (first start only)…"]);
    expect(r).toMatchObject({ ready: false, built: false });
    expect(r.reason).toContain("run `npm run build:web`");
  }, 30_000);

  it("builds when the sources are there and the build is missing (through the workspace's build script)", async () => {
    const root = tempDir();
    writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "r", private: true, workspaces: ["packages/web"] }));
    mkdirSync(path.join(root, "packages/web/src"), { recursive: true });
    writeFileSync(path.join(root, "packages/web/index.html"), "<!doctype html>");
    const build = "node -e \"require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/index.html','built')\"";
    writeFileSync(path.join(root, "packages/web/package.json"), JSON.stringify({ name: "@deerflow-ts/web", version: "0.0.0", scripts: { build } }));
    const r = await ensureWebBuild({ root });
    expect(r).toEqual({ ready: true, built: true, dist: path.join(root, "packages/web/dist") });
  }, 30_000);

  it("rebuilds a build older than a source file (a pulled change), and keeps the old build when that rebuild fails", async () => {
    const root = tempDir();
    writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "r", private: true, workspaces: ["packages/web"] }));
    mkdirSync(path.join(root, "packages/web/src/components"), { recursive: true });
    mkdirSync(path.join(root, "packages/web/dist"), { recursive: true });
    writeFileSync(path.join(root, "packages/web/index.html"), "<!doctype html>");
    writeFileSync(path.join(root, "packages/web/src/components/Composer.tsx"), "export {}");
    writeFileSync(path.join(root, "packages/web/dist/index.html"), "old");
    const build = "node -e \"require('fs').writeFileSync('dist/index.html','new')\"";
    writeFileSync(path.join(root, "packages/web/package.json"), JSON.stringify({ name: "@deerflow-ts/web", version: "0.0.0", scripts: { build } }));
    const dist = path.join(root, "packages/web/dist");
    // the build is newer than every source: nothing to do
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(dist, "index.html"), later, later);
    expect(await ensureWebBuild({ root })).toEqual({ ready: true, built: false, dist });
    // a source changed after the build: rebuilt
    const evenLater = new Date(Date.now() + 120_000);
    utimesSync(path.join(root, "packages/web/src/components/Composer.tsx"), evenLater, evenLater);
    const logs: string[] = [];
    expect(await ensureWebBuild({ root, log: (l) => logs.push(l) })).toEqual({ ready: true, built: true, dist });
    expect(logs[0]).toBe("Rebuilding the web UI (its sources changed since the last build)…");
    expect(readFileSync(path.join(dist, "index.html"), "utf8")).toBe("new");
    // a failed rebuild keeps serving the previous build and says why
    writeFileSync(path.join(root, "packages/web/package.json"), JSON.stringify({ name: "@deerflow-ts/web", version: "0.0.0", scripts: { build: "exit 3" } }));
    const latest = new Date(Date.now() + 180_000);
    utimesSync(path.join(root, "packages/web/src/components/Composer.tsx"), latest, latest);
    const r = await ensureWebBuild({ root });
    expect(r).toMatchObject({ ready: true, built: false });
    expect(r.reason).toContain("serving the previous build");
  }, 60_000);
});
