#!/usr/bin/env node
// The `deerflow` command. Installed from npm it runs the compiled dist/main.js. In a checkout of the repository
// (src/ present, tsx installed as a dev dependency) it runs the TypeScript sources through tsx instead, so a
// source edit takes effect without a build; DEERFLOW_USE_DIST=1 runs the build there too.
import { existsSync } from "node:fs";
import { register as registerHooks } from "node:module";

const fromSource = process.env.DEERFLOW_USE_DIST !== "1" && existsSync(new URL("../src/main.ts", import.meta.url));
let entry = "../dist/main.js";
if (fromSource) {
  const { register } = await import("tsx/esm/api");
  register();
  // registered after tsx so it runs first: workspace packages resolve to their sources, not to dist/
  registerHooks("./source-conditions.js", import.meta.url);
  entry = "../src/main.ts";
}
const { main } = await import(entry);
const code = await main(process.argv.slice(2));
if (code !== null) process.exit(code);
