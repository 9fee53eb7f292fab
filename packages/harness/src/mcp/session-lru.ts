import type { McpConnection } from "./connection";

interface Entry {
  server: string;
  userId: string;
  threadId: string;
  conn: Promise<McpConnection>;
}

const keyOf = (server: string, userId: string, threadId: string) => `${server}\u0000${userId}:${threadId}`;

/**
 * Stdio sessions keyed by `(server, "user:thread")`, least recently used
 * first out once `max` is exceeded (the evicted session is closed). A
 * session still starting is shared by concurrent callers; one that failed
 * to start or has closed is replaced on the next `get`.
 */
export class SessionLru {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly max: number,
    private readonly onEvict: (conn: McpConnection) => void,
  ) {}

  /** The live session of this scope, started with `open` when there is none. */
  async get(server: string, userId: string, threadId: string, open: () => Promise<McpConnection>): Promise<McpConnection> {
    const key = keyOf(server, userId, threadId);
    const hit = this.entries.get(key);
    if (hit) {
      const conn = await hit.conn.catch(() => null);
      if (conn && !conn.closed) {
        this.entries.delete(key);
        this.entries.set(key, hit);
        return conn;
      }
      if (this.entries.get(key) === hit) this.entries.delete(key);
    }
    const entry: Entry = { server, userId, threadId, conn: open() };
    this.entries.set(key, entry);
    entry.conn.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.max) {
      const [oldest, victim] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      void victim.conn.then(this.onEvict, () => undefined);
    }
    return entry.conn;
  }

  /** Forget a session that ended (the next call starts a new one). */
  remove(server: string, userId: string, threadId: string, conn: McpConnection): void {
    const key = keyOf(server, userId, threadId);
    const e = this.entries.get(key);
    if (!e) return;
    void e.conn.then((c) => {
      if (c === conn && this.entries.get(key) === e) this.entries.delete(key);
    }, () => undefined);
  }

  /** Number of sessions of one server. */
  count(server: string): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.server === server) n++;
    return n;
  }

  /** Remove and close the sessions of one thread, of one user or of all users. */
  closeScope(threadId: string, userId?: string): Promise<void> {
    return this.closeMatching((e) => e.threadId === threadId && (userId === undefined || e.userId === userId));
  }

  /** Remove and close every session. */
  closeAll(): Promise<void> {
    return this.closeMatching(() => true);
  }

  private closeMatching(match: (e: Entry) => boolean): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [k, e] of this.entries) {
      if (!match(e)) continue;
      this.entries.delete(k);
      // A session still starting is closed as soon as it has started.
      closing.push(e.conn.then((c) => c.close(), () => undefined));
    }
    return Promise.all(closing).then(() => undefined);
  }
}
