import { useRef, useState } from "react";
import { deleteSkill, fetchSkillContent, installSkillFile, listSkills, setSkillEnabled } from "../api/skills";
import type { SkillInfo } from "../api/skills";
import { ErrorBanner } from "../components/ErrorBanner";
import { useRemote } from "../components/use-remote";

/** Props of {@link SkillsPage}. */
export interface SkillsPageProps {
  /** Leave the page. */
  onClose(): void;
}

const CATEGORY_LABEL: Record<SkillInfo["category"], string> = { public: "Public", custom: "Custom", legacy: "Legacy" };

/** Skills: list with enable/disable, view SKILL.md, install a `.skill` package, delete custom skills. */
export function SkillsPage({ onClose }: SkillsPageProps) {
  const { value: skills, error, setError, refresh } = useRemote(listSkills);
  const [notice, setNotice] = useState<string | undefined>();
  const [viewing, setViewing] = useState<{ name: string; content: string } | undefined>();
  const [busy, setBusy] = useState<string | undefined>();
  const picker = useRef<HTMLInputElement>(null);

  const act = async (key: string, fn: () => Promise<unknown>) => {
    setBusy(key);
    setNotice(undefined);
    try {
      await fn();
      await refresh();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(undefined);
    }
  };

  const toggle = (s: SkillInfo) => act(`toggle:${s.name}`, () => setSkillEnabled(s.name, !s.enabled));
  const view = (s: SkillInfo) =>
    act(`view:${s.name}`, async () => {
      setViewing({ name: s.name, content: await fetchSkillContent(s.name) });
    });
  const remove = (s: SkillInfo) => {
    if (!window.confirm(`Delete custom skill "${s.name}"? Its files are removed.`)) return;
    void act(`delete:${s.name}`, () => deleteSkill(s.name));
  };
  const install = (file: File) =>
    act("install", async () => {
      const res = await installSkillFile(file);
      setNotice(res.message);
    });

  const groups = (["public", "custom", "legacy"] as const).map((c) => ({ category: c, items: (skills ?? []).filter((s) => s.category === c) })).filter((g) => g.items.length);

  return (
    <main className="skills-page" aria-label="Skills">
      <div className="topbar">
        <h1 className="skills-title">Skills</h1>
        <span className="spacer" />
        <button type="button" className="new-chat" disabled={busy === "install"} onClick={() => picker.current?.click()}>
          {busy === "install" ? "Installing…" : "Install .skill"}
        </button>
        <input
          ref={picker}
          type="file"
          accept=".skill"
          hidden
          data-testid="skill-file-input"
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = "";
            if (f) void install(f);
          }}
        />
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      {notice && (
        <div className="banner" role="status">
          {notice}
        </div>
      )}
      <div className="skills-body">
        <p className="muted">
          Skills are packaged workflows. The agent sees each enabled skill's name and description and reads its SKILL.md when a task matches; type{" "}
          <code>/skill-name</code> at the start of a message to activate one directly.
        </p>
        {skills && skills.length === 0 && <p className="muted">No skills installed. Put packages under skills/public/ or install a .skill file.</p>}
        {groups.map((g) => (
          <section key={g.category} aria-label={`${CATEGORY_LABEL[g.category]} skills`}>
            <h2 className="skills-group">{CATEGORY_LABEL[g.category]}</h2>
            <ul className="skill-list">
              {g.items.map((s) => (
                <li className={`skill-card${s.enabled ? "" : " disabled"}`} key={`${s.category}:${s.name}`} data-testid="skill-card" data-skill={s.name}>
                  <div className="skill-head">
                    <strong>{s.name}</strong>
                    {s.license && <span className="chip">{s.license}</span>}
                    <span className="spacer" />
                    <label className="toggle">
                      <input type="checkbox" aria-label={`Enable ${s.name}`} checked={s.enabled} disabled={busy === `toggle:${s.name}`} onChange={() => void toggle(s)} />
                      {s.enabled ? "Enabled" : "Disabled"}
                    </label>
                    <button type="button" onClick={() => void view(s)}>
                      View SKILL.md
                    </button>
                    {s.editable && (
                      <button type="button" className="danger" onClick={() => remove(s)}>
                        Delete
                      </button>
                    )}
                  </div>
                  <p className="skill-desc">{s.description}</p>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
      {viewing && (
        <div className="skill-viewer" role="dialog" aria-label={`SKILL.md of ${viewing.name}`}>
          <div className="skill-viewer-head">
            <strong>{viewing.name}/SKILL.md</strong>
            <span className="spacer" />
            <button type="button" onClick={() => setViewing(undefined)}>
              Close
            </button>
          </div>
          <pre className="skill-viewer-body">{viewing.content}</pre>
        </div>
      )}
    </main>
  );
}
