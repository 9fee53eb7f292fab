export { syncDir, syncDirSync, syncFile, tempPathFor, writeFileAtomic, writeFileAtomicSync, writeFilesAtomicSync } from "./atomic-write";
export type { AtomicWriteOptions, AtomicWriteSteps } from "./atomic-write";
