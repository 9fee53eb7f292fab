import path from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** Builds the page harness (test/e2e/page-harness) like the app; the output dir is passed by the test. */
export default defineConfig({
  root: path.dirname(fileURLToPath(import.meta.url)),
  base: "/",
  plugins: [react()],
  build: { sourcemap: false, chunkSizeWarningLimit: 2000 },
  logLevel: "silent",
});
