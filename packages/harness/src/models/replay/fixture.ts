import fs from "node:fs";
import { z } from "zod";
import { ModelConfigError } from "../../errors";

/** A recorded model reply in LangChain's `messages_to_dict` shape (`{type: "ai", data: {...}}`). */
const outputSchema = z.looseObject({
  type: z.literal("ai"),
  data: z.looseObject({
    content: z.union([z.string(), z.array(z.unknown())]),
    additional_kwargs: z.record(z.string(), z.unknown()).optional(),
    response_metadata: z.record(z.string(), z.unknown()).optional(),
    id: z.string().nullable().optional(),
    tool_calls: z.array(z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()), id: z.string().nullable().optional() })).optional(),
    usage_metadata: z
      .looseObject({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() })
      .nullable()
      .optional(),
  }),
});

/** One recorded model call of a fixture. */
const turnSchema = z.looseObject({
  caller: z.string().optional(),
  conversation_hash: z.string().optional(),
  input_hash: z.string().min(1),
  output: outputSchema,
});

/** A replay fixture file, DeerFlow's format: a scenario's recorded model calls keyed by input hash. */
export const replayFixtureSchema = z.looseObject({
  scenario: z.string().optional(),
  mode: z.string().optional(),
  model: z.string().optional(),
  prompt: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  turns: z.array(turnSchema),
});

/** A replay fixture as read from its file. */
export type ReplayFixture = z.infer<typeof replayFixtureSchema>;
/** One recorded model call. */
export type ReplayTurn = z.infer<typeof turnSchema>;
/** A recorded reply. */
export type ReplayOutput = z.infer<typeof outputSchema>;

/** Read and validate a fixture file; a clear {@link ModelConfigError} names the file and what is wrong. */
export function loadReplayFixture(file: string): ReplayFixture {
  let raw: string;
  try {
    raw = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new ModelConfigError(`Replay fixture ${file} cannot be read (${(err as Error).message}); set \`fixture:\` of the replay model (or DEERFLOW_REPLAY_FIXTURE) to a fixture file.`, {
      code: "model_replay_fixture_unreadable",
      details: { file },
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new ModelConfigError(`Replay fixture ${file} is not JSON: ${(err as Error).message}`, { code: "model_replay_fixture_invalid", details: { file } });
  }
  const parsed = replayFixtureSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelConfigError(`Replay fixture ${file}: ${issue.path.join(".") || "(root)"}: ${issue.message} (expected {turns: [{caller, input_hash, output: {type: "ai", data}}]})`, {
      code: "model_replay_fixture_invalid",
      details: { file, path: issue.path.map(String) },
    });
  }
  return parsed.data;
}
