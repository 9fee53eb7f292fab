/** Plain REST calls of the gateway (models, uploads, artifacts), as DeerFlow's gateway serves them. */
import type { ModelInfo, ModelsResponse } from "@deerflow-ts/harness/wire";
import { ApiError, apiFetch, csrfHeader, failure } from "./http";

/** A model entry of `GET /api/models` (the gateway's own shape). */
export type { ModelInfo };

/** An entry of the upload response. */
export interface UploadedFileInfo {
  filename: string;
  size: number;
  virtual_path: string;
  artifact_url?: string;
}

/** `GET /api/models`. */
export async function fetchModels(base = ""): Promise<ModelInfo[]> {
  const res = await apiFetch(`${base}/api/models`);
  if (!res.ok) throw await failure(res);
  const body = (await res.json()) as Partial<ModelsResponse>;
  return body.models ?? [];
}

/** `POST /api/threads/{id}/uploads` (multipart, repeated `files`). */
export async function uploadFiles(threadId: string, files: File[], base = ""): Promise<UploadedFileInfo[]> {
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  const res = await apiFetch(`${base}/api/threads/${encodeURIComponent(threadId)}/uploads`, { method: "POST", body: form });
  if (!res.ok) throw await failure(res);
  const body = (await res.json()) as { files?: UploadedFileInfo[] };
  return body.files ?? [];
}

/** URL of an artifact (virtual path `/mnt/user-data/...`), each segment URI-encoded. */
export function artifactUrl(threadId: string, virtualPath: string, download = false, base = ""): string {
  const segs = virtualPath.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
  return `${base}/api/threads/${encodeURIComponent(threadId)}/artifacts/${segs}${download ? "?download=true" : ""}`;
}

/** Reads a text artifact's first MiB (Range request) for preview. */
export async function fetchArtifactText(threadId: string, virtualPath: string, base = ""): Promise<{ text: string; truncated: boolean }> {
  const res = await apiFetch(artifactUrl(threadId, virtualPath, false, base), { headers: { Range: "bytes=0-1048575" } });
  if (res.status === 416) return { text: "", truncated: false };
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  const range = res.headers.get("Content-Range");
  const total = range ? Number(range.split("/")[1]) : NaN;
  return { text, truncated: res.status === 206 && Number.isFinite(total) && total > 1048576 };
}

/** `POST /api/threads/{id}/runs/{run_id}/cancel?wait=0&action=interrupt`; a 409 "not cancellable" is ignored. */
export async function cancelRun(threadId: string, runId: string, base = ""): Promise<void> {
  const res = await apiFetch(`${base}/api/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel?wait=0&action=interrupt`, { method: "POST" });
  if (!res.ok && res.status !== 409 && res.status !== 404) throw await failure(res);
}

export { ApiError, csrfHeader };
