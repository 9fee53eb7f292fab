/** How an artifact is previewed, decided from its file extension. */
export type PreviewKind = "markdown" | "image" | "csv" | "html" | "code" | "text" | "binary";

const IMAGE = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "ico"]);
const CODE = new Set(["js", "mjs", "cjs", "jsx", "ts", "tsx", "py", "sh", "bash", "json", "css", "xml", "sql", "yml", "yaml"]);
const TEXT = new Set(["txt", "log", "ini", "toml", "cfg", "conf", "env", "tsv"]);

/** The lower-case extension of a path. */
export function extensionOf(path: string): string {
  const name = path.split("/").pop() ?? "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** The preview kind for a path. */
export function previewKind(path: string): PreviewKind {
  const ext = extensionOf(path);
  if (ext === "md" || ext === "markdown") return "markdown";
  if (IMAGE.has(ext)) return "image";
  if (ext === "csv") return "csv";
  if (ext === "html" || ext === "htm") return "html";
  if (CODE.has(ext)) return "code";
  if (TEXT.has(ext) || ext === "") return "text";
  return "binary";
}

/** The file name part of a virtual path. */
export function baseName(path: string): string {
  return path.split("/").pop() ?? path;
}
