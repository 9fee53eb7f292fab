/** The skills REST API (`/api/skills` of the gateway). */
import { ApiError, jsonRequest } from "./http";
import { uploadFiles } from "./rest";

/** DeerFlow's `SkillResponse`. */
export interface SkillInfo {
  name: string;
  description: string;
  license: string | null;
  category: "public" | "custom" | "legacy";
  enabled: boolean;
  /** Custom skills can be deleted. */
  editable: boolean;
}

function request<T>(method: string, path: string, body?: unknown, base = ""): Promise<T> {
  return jsonRequest<T>(method, path, body, base);
}

/** `GET /api/skills`. */
export async function listSkills(base = ""): Promise<SkillInfo[]> {
  return (await request<{ skills: SkillInfo[] }>("GET", "/skills", undefined, base)).skills;
}

/** `PUT /api/skills/{name}` with `{enabled}`. */
export function setSkillEnabled(name: string, enabled: boolean, base = ""): Promise<SkillInfo> {
  return request<SkillInfo>("PUT", `/skills/${encodeURIComponent(name)}`, { enabled }, base);
}

/** The raw SKILL.md of a skill. */
export async function fetchSkillContent(name: string, base = ""): Promise<string> {
  return (await request<{ content: string }>("GET", `/skills/${encodeURIComponent(name)}/content`, undefined, base)).content;
}

/** `DELETE /api/skills/custom/{name}`. */
export async function deleteSkill(name: string, base = ""): Promise<void> {
  await request("DELETE", `/skills/custom/${encodeURIComponent(name)}`, undefined, base);
}

/**
 * Install a `.skill` file the way DeerFlow's UI does: the package must sit in
 * a thread's files, so it is uploaded to a fresh thread first, then
 * `POST /api/skills/install {thread_id, path}` installs it from there.
 */
export async function installSkillFile(file: File, base = ""): Promise<{ skill_name: string; message: string }> {
  const { thread_id } = await request<{ thread_id: string }>("POST", "/threads", { metadata: { purpose: "skill-install" } }, base);
  const [uploaded] = await uploadFiles(thread_id, [file], base);
  if (!uploaded) throw new ApiError(400, "The upload returned no file");
  return request("POST", "/skills/install", { thread_id, path: uploaded.virtual_path }, base);
}
