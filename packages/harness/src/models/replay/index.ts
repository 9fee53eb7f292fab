export { ReplayChatModel, REPLAY_FIXTURE_ENV } from "./replay-chat-model";
export type { ReplayChatModelOptions, ReplayMiss } from "./replay-chat-model";
export { loadReplayFixture, replayFixtureSchema } from "./fixture";
export type { ReplayFixture, ReplayOutput, ReplayTurn } from "./fixture";
export { canonicalReplayConversation, DEFAULT_REPLAY_CALLER, normalizeReplayCaller, normalizeReplayText, replayConversationHash, replayInputKey } from "./key";
export { pythonJsonDumps } from "./python-json";
export { appendReplayTurnTo, buildReplayFixture, createRecordingChatModel, readRecordedTurns, REPLAY_RECORD_ENV, replayTurnOf } from "./recorder";
