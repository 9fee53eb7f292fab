import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** Dev server proxies /api to a gateway on DEERFLOW_API (default http://127.0.0.1:8001). */
export default defineConfig({
  plugins: [react()],
  server: { proxy: { "/api": process.env.DEERFLOW_API ?? "http://127.0.0.1:8001" } },
  build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 600 },
});
