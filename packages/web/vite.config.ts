import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * Dev server proxies /api to a gateway on DEERFLOW_API (default http://127.0.0.1:8001).
 *
 * A production build is always React's production build: vite otherwise follows an inherited NODE_ENV
 * (vitest sets `test`), and a build made from a test run or a tool started by one (`deerflow serve`
 * rebuilding the UI) shipped the development build, ~70 KB gzip larger and slower.
 */
export default defineConfig(({ command, mode }) => {
  if (command === "build" && mode === "production") process.env.NODE_ENV = "production";
  return {
    plugins: [react()],
    server: { proxy: { "/api": process.env.DEERFLOW_API ?? "http://127.0.0.1:8001" } },
    build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 600 },
  };
});
