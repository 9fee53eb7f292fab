import { useEffect, useMemo, useState, type KeyboardEvent, type ReactNode } from "react";
import { listSkills } from "../api/skills";
import type { SkillInfo } from "../api/skills";

/** What the composer gets from {@link useSkillPicker}. */
export interface SkillPickerHandle {
  /** The suggestion list (null when closed). */
  element: ReactNode;
  /** Give the picker first go at a key of the textarea; true when it handled the key. */
  onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>): boolean;
}

/** `/skill-name` being typed at the very start of the message (no space yet). */
function slashQuery(text: string): string | undefined {
  const m = /^\/([a-z0-9-]*)$/.exec(text);
  return m ? m[1] : undefined;
}

/**
 * The composer's skill picker: typing `/` at the start of the message lists
 * the enabled skills (filtered as you type); ↑/↓ move, Enter or Tab insert
 * `/name `, Escape closes. Sending `/name task` activates that skill for the run.
 */
export function useSkillPicker(text: string, setText: (t: string) => void): SkillPickerHandle {
  const query = slashQuery(text);
  const open = query !== undefined;
  const [skills, setSkills] = useState<SkillInfo[] | undefined>();
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | undefined>();

  useEffect(() => {
    if (!open || skills) return;
    let live = true;
    listSkills()
      .then((all) => live && setSkills(all.filter((s) => s.enabled)))
      .catch(() => live && setSkills([]));
    return () => {
      live = false;
    };
  }, [open, skills]);

  const matches = useMemo(() => (skills ?? []).filter((s) => query !== undefined && s.name.includes(query)).sort((a, b) => Number(!a.name.startsWith(query ?? "")) - Number(!b.name.startsWith(query ?? ""))), [skills, query]);
  const visible = open && dismissed !== text && matches.length > 0;
  useEffect(() => setActive(0), [query]);

  const choose = (s: SkillInfo) => setText(`/${s.name} `);

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!visible) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setActive((i) => (i + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length);
      return true;
    }
    if ((e.key === "Enter" && !e.shiftKey) || e.key === "Tab") {
      e.preventDefault();
      const s = matches[Math.min(active, matches.length - 1)];
      if (s) choose(s);
      return true;
    }
    if (e.key === "Escape") {
      setDismissed(text);
      return true;
    }
    return false;
  };

  const element = visible ? (
    <ul className="skill-picker" role="listbox" aria-label="Skills">
      {matches.map((s, i) => (
        <li
          key={`${s.category}:${s.name}`}
          role="option"
          aria-selected={i === active}
          className={i === active ? "active" : undefined}
          onMouseDown={(e) => {
            e.preventDefault();
            choose(s);
          }}
        >
          <span className="skill-picker-name">/{s.name}</span>
          <span className="skill-picker-desc">{s.description}</span>
        </li>
      ))}
    </ul>
  ) : null;
  return { element, onKeyDown };
}
