export { createSandboxTools, createBashTool, createGlobTool, createGrepTool, createLsTool, createReadFileTool, createStrReplaceTool, createWriteFileTool } from "./sandbox-tools";
export type { CreateSandboxToolsOptions, SandboxToolOptions } from "./sandbox-tools";
export { createPresentFilesTool, normalizeOutputPath, PRESENT_FILES_OUTSIDE_MESSAGE } from "./present-files";
export { createViewImageTool, sniffImageMime, VIEW_IMAGE_MAX_BYTES } from "./view-image";
export { createListUploadedFilesTool } from "./list-uploaded-files";
export { askClarificationTool, withoutClarificationTool, ASK_CLARIFICATION_TOOL_NAME } from "./ask-clarification";
export { createWriteTodosTool, TODO_SYSTEM_PROMPT, WRITE_TODOS_TOOL_DESCRIPTION } from "./write-todos";
