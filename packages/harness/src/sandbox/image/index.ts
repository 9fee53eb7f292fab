/**
 * Sandbox images: the default image's Dockerfile build, and a registry-free build from this
 * host's own programs or by debootstrap from the apt mirror (`deerflow sandbox image build
 * [--from-host | --debootstrap]`). See docs/sandbox.md.
 */
export {
  buildImageFromDockerfile,
  buildImageFromHost,
  DEFAULT_SANDBOX_IMAGE,
  dockerfileBaseImages,
  IMAGE_BUILD_LABEL,
  IMAGE_CONTENT_LABEL,
  importRootfs,
  SANDBOX_DOCKERFILE,
} from "./build";
export type { BuildImageOptions, BuildLog, BuiltImage } from "./build";
export { buildImageFromDebootstrap, DEBOOTSTRAP_PACKAGES, hostAptSource, parseAptSources } from "./debootstrap";
export type { DebootstrapOptions } from "./debootstrap";
export { DEFAULT_HOST_PROGRAMS, HOST_PROGRAM_DIRS, planHostRootfs, writeRootfs } from "./host-rootfs";
export type { HostRootfsOptions, ImageUser, RootfsEntry, RootfsPlan } from "./host-rootfs";
export { isElf, sharedLibraries } from "./elf-deps";
export type { SharedLibraries } from "./elf-deps";
