#!/usr/bin/env node
// DeerFlow CLI entry: runs the TypeScript sources directly through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
const code = await main(process.argv.slice(2));
if (code !== null) process.exit(code);
