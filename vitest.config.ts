import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// The workspace packages export their TypeScript sources under the "deerflow-source" condition (and
// compiled dist/ otherwise): tests run from source, with no build step.
const SOURCE = "deerflow-source";

export default defineConfig({
  resolve: { conditions: [SOURCE, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE, ...defaultServerConditions] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "packages/*/test/**/*.test.tsx", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["test/setup/services.ts"],
    pool: "forks",
    maxWorkers: 2,
  },
});
