import type { Message } from "../messages";

/**
 * The messages of a run's final state that the run added or replaced: those
 * that are not the very objects the thread held when the run started
 * (messages are immutable values, so an unchanged message is the same
 * object). A transcript write of just these stays proportional to the turn,
 * not to the thread.
 */
export function messagesChangedByRun(finalMessages: readonly Message[], startMessages: readonly Message[]): Message[] {
  const unchanged = new Set<Message>(startMessages);
  return finalMessages.filter((m) => !unchanged.has(m));
}
