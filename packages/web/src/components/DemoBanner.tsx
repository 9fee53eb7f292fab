import { useEffect, useState } from "react";
import { apiFetch } from "../api/http";

/** `demo_mode` of `GET /api/features` (set by `npm start` without a config.yaml). */
export interface DemoModeInfo {
  enabled: boolean;
  configure_command?: string;
}

/** Read demo mode from `/api/features`; a server without the key is not in demo mode. */
export async function fetchDemoMode(base = ""): Promise<DemoModeInfo> {
  const res = await apiFetch(`${base}/api/features`);
  if (!res.ok) return { enabled: false };
  const body = (await res.json()) as { demo_mode?: DemoModeInfo };
  return body.demo_mode?.enabled ? body.demo_mode : { enabled: false };
}

/**
 * A banner shown while the server runs the scripted demo model: every answer
 * is scripted, so say so, and give the one command that configures a real one.
 */
export function DemoBanner() {
  const [demo, setDemo] = useState<DemoModeInfo>({ enabled: false });
  useEffect(() => {
    let live = true;
    fetchDemoMode()
      .then((d) => live && setDemo(d))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!demo.enabled) return null;
  const command = demo.configure_command ?? "npx deerflow init";
  return (
    <div className="banner demo" role="note" data-testid="demo-banner">
      <span>
        <strong>Demo mode:</strong> answers come from a scripted test model, not an LLM. To use a real model, run <code>{command}</code> and restart.
      </span>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(command)}>
        Copy command
      </button>
    </div>
  );
}
