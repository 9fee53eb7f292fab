/** Entry point: `npx tsx packages/harness/src/testing/scripted-http/main.ts --port 8787`. */
import { runScriptedLLMServerCli } from "./cli";

runScriptedLLMServerCli(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
