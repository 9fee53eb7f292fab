/**
 * Sandbox images: the default image's Dockerfile build, and a registry-free build from this
 * host's own programs (`deerflow sandbox image build [--from-host]`). See docs/sandbox.md.
 */
export {
  buildImageFromDockerfile,
  buildImageFromHost,
  DEFAULT_SANDBOX_IMAGE,
  dockerfileBaseImages,
  IMAGE_BUILD_LABEL,
  IMAGE_CONTENT_LABEL,
  SANDBOX_DOCKERFILE,
} from "./build";
export type { BuildImageOptions, BuildLog, BuiltImage } from "./build";
export { DEFAULT_HOST_PROGRAMS, HOST_PROGRAM_DIRS, planHostRootfs, writeRootfs } from "./host-rootfs";
export type { HostRootfsOptions, ImageUser, RootfsEntry, RootfsPlan } from "./host-rootfs";
export { isElf, sharedLibraries } from "./elf-deps";
export type { SharedLibraries } from "./elf-deps";
