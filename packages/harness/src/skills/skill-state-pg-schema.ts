import type { Migration } from "../postgres/migrate";

/** Migration component of users' skill states on PostgreSQL. */
export const SKILL_STATES_COMPONENT = "skill_states";

/** Component `skill_states`: one row per (user, skill); a toggle is one upsert of its row. */
export const SKILL_STATES_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "user_skill_states",
    up: `
      CREATE TABLE deerflow_skill_states (
        user_id TEXT COLLATE "C" NOT NULL,
        skill_name TEXT COLLATE "C" NOT NULL,
        enabled BOOLEAN NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, skill_name)
      );
    `,
  },
];
