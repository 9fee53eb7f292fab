import { readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { ThreadStore } from "../persistence";

/** Where earlier client versions kept their private JSON thread index, relative to the data dir. */
export const LEGACY_THREAD_INDEX_PATH = path.join("data", "client-threads.json");

const entrySchema = z.object({
  thread_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.string().optional(),
  title: z.string().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const fileSchema = z.object({ threads: z.record(z.string(), z.unknown()) });

/**
 * One-time migration of the old client JSON index (`{dataDir}/data/client-threads.json`)
 * into the shared thread store. Threads the store already has are left
 * alone; malformed entries are skipped. The file is then renamed to
 * `client-threads.json.imported` so the import never runs twice. Returns the
 * number of threads imported (0 when there is no file).
 */
export async function importLegacyThreadIndex(dataDir: string, threads: ThreadStore, userId: string): Promise<number> {
  const file = path.join(dataDir, LEGACY_THREAD_INDEX_PATH);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let imported = 0;
  let parsed: z.infer<typeof fileSchema> | undefined;
  try {
    const r = fileSchema.safeParse(JSON.parse(text));
    parsed = r.success ? r.data : undefined;
  } catch {
    parsed = undefined;
  }
  for (const raw of Object.values(parsed?.threads ?? {})) {
    const e = entrySchema.safeParse(raw);
    if (!e.success || (await threads.get(e.data.thread_id))) continue;
    try {
      await threads.create({
        threadId: e.data.thread_id,
        userId,
        // a run cannot still be going on in a process that wrote the old format
        status: e.data.status === "running" ? "error" : (e.data.status ?? "idle"),
        metadata: e.data.metadata ?? {},
        displayName: e.data.title ?? null,
        createdAt: e.data.created_at,
        updatedAt: e.data.updated_at,
      });
      imported++;
    } catch {
      // created concurrently by another process: keep that row
    }
  }
  await rename(file, `${file}.imported`);
  return imported;
}
