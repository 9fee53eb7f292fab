import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryCorruptionError, MemoryFileStorage, emptyMemoryDocument } from "../../src/memory";
import { tempDir } from "./_helpers";

const scope = { userId: "alice", agentName: null };
const withFacts = (n: number, tag: string) => ({
  ...emptyMemoryDocument(),
  facts: Array.from({ length: n }, (_, i) => ({ id: `fact_${String(i).padStart(8, "0")}`, content: `${tag} fact ${i} ${"x".repeat(200)}`, category: "context", confidence: 0.8, createdAt: "2026-01-01T00:00:00.000Z", source: "t" })),
});

describe("memory.json storage", () => {
  it("a crash while writing the temp file or renaming leaves the previous file intact", () => {
    const t = tempDir();
    try {
      const good = new MemoryFileStorage(t.dir);
      good.save(scope, withFacts(2, "old"), 0);
      const file = good.filePath(scope);
      const before = readFileSync(file, "utf8");
      const crashWrite = new MemoryFileStorage(t.dir, {
        writeTemp: (f, data) => {
          writeFileSync(f, data.slice(0, 50));
          throw new Error("ENOSPC: disk full");
        },
        rename: () => {},
      });
      expect(() => crashWrite.save(scope, withFacts(3, "new"), 1)).toThrow(/ENOSPC/);
      const crashRename = new MemoryFileStorage(t.dir, {
        writeTemp: (f, data) => writeFileSync(f, data),
        rename: () => {
          throw new Error("EIO");
        },
      });
      expect(() => crashRename.save(scope, withFacts(3, "new"), 1)).toThrow(/EIO/);
      expect(readFileSync(file, "utf8")).toBe(before);
      expect(readdirSync(path.dirname(file))).toEqual(["memory.json"]);
      expect(new MemoryFileStorage(t.dir).load(scope).facts.map((f) => f.content.split(" ")[0])).toEqual(["old", "old"]);
    } finally {
      t.cleanup();
    }
  });

  it("a process killed mid-write never leaves a torn memory.json", async () => {
    const t = tempDir();
    try {
      const storage = new MemoryFileStorage(t.dir);
      storage.save(scope, withFacts(1, "seed"), 0);
      const file = storage.filePath(scope);
      const storageModule = path.resolve(__dirname, "../../src/memory/storage.ts");
      // A writer that rewrites a large document in a loop until it is killed.
      const script = `import { MemoryFileStorage } from ${JSON.stringify(storageModule)};
const s = new MemoryFileStorage(${JSON.stringify(t.dir)});
const facts = Array.from({ length: 3000 }, (_, i) => ({ id: "fact_" + String(i).padStart(8, "0"), content: "big fact " + i + " " + "y".repeat(300), category: "context", confidence: 0.8, createdAt: "2026-01-01T00:00:00.000Z", source: "t" }));
process.stdout.write("ready\\n");
for (let i = 0; ; i++) s.save({ userId: "alice", agentName: null }, { version: "1.0", revision: 0, lastUpdated: "", user: {}, history: {}, facts });`;
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: path.resolve(__dirname, "../../../.."), stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      await new Promise((r) => setTimeout(r, 250));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      const doc = JSON.parse(readFileSync(file, "utf8"));
      expect([1, 3000]).toContain(doc.facts.length);
    } finally {
      t.cleanup();
    }
  }, 15_000);

  it("a corrupt file is a MemoryCorruptionError; an external edit is picked up", () => {
    const t = tempDir();
    try {
      const s = new MemoryFileStorage(t.dir);
      s.save(scope, withFacts(1, "a"), 0);
      const file = s.filePath(scope);
      const doc = JSON.parse(readFileSync(file, "utf8"));
      doc.facts[0].content = "edited by hand, and longer";
      writeFileSync(file, JSON.stringify(doc));
      expect(s.load(scope).facts[0].content).toBe("edited by hand, and longer");
      writeFileSync(file, "{ torn");
      expect(() => s.load(scope)).toThrow(MemoryCorruptionError);
      expect(() => s.filePath({ userId: "../etc", agentName: null })).toThrow(/Invalid user/);
    } finally {
      t.cleanup();
    }
  });
});
