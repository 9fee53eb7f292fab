import { Icon } from "./Icon";
import { useRef, useState, type KeyboardEvent } from "react";
import type { ModelInfo } from "../api/rest";
import { thinkingAvailable, type ChatSettings, type ReasoningEffort } from "../stream/settings";
import { useSkillPicker } from "./SkillPicker";

/** Message input with attachments, run options and send/stop. Enter sends, Shift+Enter adds a newline. */
export function Composer(props: {
  running: boolean;
  models: ModelInfo[];
  settings: ChatSettings;
  files: File[];
  onSettings: (s: ChatSettings) => void;
  onFiles: (files: File[]) => void;
  onSend: (text: string) => void;
  onStop: () => void;
}) {
  const { running, models, settings, files, onSettings, onFiles, onSend, onStop } = props;
  const [text, setText] = useState("");
  const picker = useRef<HTMLInputElement>(null);
  const model = models.find((m) => m.name === settings.modelName);
  const skillPicker = useSkillPicker(text, setText);
  // Shown as it will be sent: a model that cannot think shows the box off (the user's choice is kept for the next model).
  const canThink = thinkingAvailable(model);

  const send = () => {
    const t = text.trim();
    if (!t || running) return;
    onSend(t);
    setText("");
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (skillPicker.onKeyDown(e)) return;
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div className="composer">
      {files.length > 0 && (
        <div className="chips" aria-label="Attached files">
          {files.map((f, i) => (
            <span className="chip" key={`${f.name}-${i}`} data-testid="attachment-chip">
              <Icon name="clip" size={12} /> {f.name}
              <button type="button" aria-label={`Remove ${f.name}`} onClick={() => onFiles(files.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      {skillPicker.element}
      <textarea
        aria-label="Message"
        placeholder="Ask anything… (Enter to send, Shift+Enter for a new line)"
        value={text}
        rows={2}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
      />
      <div className="composer-bar">
        <button type="button" className="icon" aria-label="Attach files" title="Attach files" onClick={() => picker.current?.click()}>
          <Icon name="clip" />
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          data-testid="file-input"
          onChange={(e) => {
            onFiles([...files, ...Array.from(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
        <select aria-label="Model" value={settings.modelName ?? ""} onChange={(e) => onSettings({ ...settings, modelName: e.target.value || undefined })}>
          {models.length === 0 && <option value="">default model</option>}
          {models.map((m) => (
            <option key={m.name} value={m.name}>
              {m.display_name || m.name}
            </option>
          ))}
        </select>
        <label className="toggle" title={canThink ? undefined : "This model does not support thinking"}>
          <input type="checkbox" aria-label="Thinking" checked={canThink && settings.thinking} disabled={!canThink} onChange={(e) => onSettings({ ...settings, thinking: e.target.checked })} />
          Thinking
        </label>
        <label className="toggle">
          <input type="checkbox" checked={settings.planMode} onChange={(e) => onSettings({ ...settings, planMode: e.target.checked })} />
          Plan mode
        </label>
        <label className="toggle" title="Ultra: let the agent delegate parts of the work to parallel sub-agents">
          <input type="checkbox" aria-label="Sub-agents" checked={settings.subagents === true} onChange={(e) => onSettings({ ...settings, subagents: e.target.checked })} />
          Sub-agents
        </label>
        <select
          aria-label="Reasoning effort"
          value={settings.reasoningEffort}
          disabled={model ? model.supports_reasoning_effort === false : false}
          onChange={(e) => onSettings({ ...settings, reasoningEffort: e.target.value as ReasoningEffort })}
        >
          <option value="low">Effort: low</option>
          <option value="medium">Effort: medium</option>
          <option value="high">Effort: high</option>
        </select>
        <span className="spacer" />
        {running ? (
          <button type="button" className="stop" aria-label="Stop" onClick={onStop}>
            <Icon name="stop" /> Stop
          </button>
        ) : (
          <button type="button" className="send" aria-label="Send" disabled={!text.trim()} onClick={send}>
            <Icon name="send" /> Send
          </button>
        )}
      </div>
    </div>
  );
}
