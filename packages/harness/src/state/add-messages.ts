import { InvalidUpdateError } from "../errors";
import { coerceMessage, newMessageId, REMOVE_ALL_MESSAGES } from "../messages";
import type { Message, RemoveMessage } from "../messages";

type MessageWrite = Message | RemoveMessage;

function normalise(update: unknown): MessageWrite[] {
  const list = Array.isArray(update) ? update : [update];
  return list.map((m, i) => {
    const msg = (m && typeof m === "object" && "additional_kwargs" in (m as object)) || (m as { type?: string })?.type === "remove"
      ? (m as MessageWrite)
      : coerceMessage(m, `messages[${i}]`);
    if (msg.type !== "remove" && !msg.id) return { ...msg, id: newMessageId() } as Message;
    return msg;
  });
}

/**
 * The `add_messages` reducer of LangGraph:
 * - new ids are appended, missing ids are generated;
 * - a message whose id already exists replaces it in place;
 * - `{type:"remove", id}` deletes by id (unknown id → error);
 * - `{type:"remove", id:"__remove_all__"}` clears everything written before it.
 */
export function addMessages(current: readonly Message[] | undefined, update: unknown): Message[] {
  const writes = normalise(update);
  // Fast path (the hot one: a few appends/replacements per step): scan ids from
  // the end instead of building an id→index map of the whole history.
  if (writes.length <= 8 && writes.every((w) => w.type !== "remove")) {
    const out: Message[] = current ? current.slice() : [];
    for (const w of writes as Message[]) {
      let at = -1;
      for (let i = out.length - 1; i >= 0; i--) {
        if (out[i].id === w.id) {
          at = i;
          break;
        }
      }
      if (at >= 0) out[at] = w;
      else out.push(w);
    }
    return out;
  }
  let base: Message[] = current ? current.slice() : [];
  let start = 0;
  for (let i = writes.length - 1; i >= 0; i--) {
    const w = writes[i];
    if (w.type === "remove" && w.id === REMOVE_ALL_MESSAGES) {
      base = [];
      start = i + 1;
      break;
    }
  }
  const index = new Map<string, number>();
  for (let i = 0; i < base.length; i++) {
    const id = base[i].id;
    if (id) index.set(id, i);
  }
  const dead = new Set<number>();
  for (let i = start; i < writes.length; i++) {
    const w = writes[i];
    if (w.type === "remove") {
      if (!w.id) throw new InvalidUpdateError("RemoveMessage needs an id");
      const at = index.get(w.id);
      if (at === undefined) {
        throw new InvalidUpdateError(`Attempting to delete a message with an ID that doesn't exist ('${w.id}')`);
      }
      dead.add(at);
      index.delete(w.id);
      continue;
    }
    const id = w.id as string;
    const at = index.get(id);
    if (at !== undefined) {
      base[at] = w;
    } else {
      index.set(id, base.length);
      base.push(w);
    }
  }
  if (dead.size) base = base.filter((_, i) => !dead.has(i));
  return base;
}
