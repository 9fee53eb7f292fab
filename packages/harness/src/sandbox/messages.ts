/** DeerFlow's refusal when host bash is disabled for the local provider (verbatim). */
export const LOCAL_HOST_BASH_DISABLED_MESSAGE =
  "Host bash execution is disabled for LocalSandboxProvider because it is not a secure " +
  "sandbox boundary. Switch to AioSandboxProvider for isolated bash access, or set " +
  "sandbox.allow_host_bash: true only in a fully trusted local environment.";

/** Warning logged when the local provider is selected implicitly. */
export const LOCAL_NO_ISOLATION_WARNING =
  "[deerflow] sandbox: bubblewrap is not usable on this machine; falling back to LocalSandboxProvider, " +
  "which provides NO isolation (host bash stays disabled unless sandbox.allow_host_bash is true).";
