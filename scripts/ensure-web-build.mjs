// Builds the web UI once (packages/web/dist) so `npm start` serves it; later starts reuse the build.
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (!existsSync(join(root, "packages/web/dist/index.html")) || process.argv.includes("--force")) {
  console.log("[deerflow] building the web UI (first start only)…");
  const r = spawnSync("npm", ["run", "build", "-w", "@deerflow/web"], { cwd: root, stdio: "inherit" });
  process.exit(r.status ?? 1);
}
