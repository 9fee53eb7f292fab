import type { Migration } from "../../postgres";

/** Migration component of the custom agents table on PostgreSQL. */
export const AGENTS_COMPONENT = "agents";

/**
 * Component `agents`: one row per (user, agent). The primary key is what
 * makes "exactly one of two concurrent creates wins" hold across processes.
 * `config` is the JSON text of the document (returned as written, like the
 * run records); `rev` is a fresh token per write, the agent cache's key.
 */
export const AGENTS_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "agents",
    up: `
      CREATE TABLE deerflow_agents (
        user_id TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        config TEXT NOT NULL,
        soul TEXT NOT NULL,
        rev TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, name)
      );
    `,
  },
];
