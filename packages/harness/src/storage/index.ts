export { openStorage } from "./open-storage";
export type { OpenedStorage, OpenStorageOptions, StorageBackendName } from "./open-storage";
