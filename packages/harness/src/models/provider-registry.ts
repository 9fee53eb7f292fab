import { ModelConfigError } from "../errors";

/** The AI SDK package family a provider is built on. */
export type ProviderFamily = "openai" | "anthropic" | "openai-compatible";

/** What a `use:` value resolves to. */
export interface ProviderSpec {
  /** Our short provider id (`openai`, `deepseek`, `vllm`…). */
  id: string;
  family: ProviderFamily;
  /** Base URL used when the model entry sets none. */
  defaultBaseUrl?: string;
  /** Environment variable that overrides {@link defaultBaseUrl} (the provider SDK's own, e.g. `OPENAI_BASE_URL`). */
  baseUrlEnv?: string;
  /** Environment variable holding the API key when the entry sets none. */
  apiKeyEnv?: string;
  /** True when a request without an API key is normal (local servers). */
  apiKeyOptional?: boolean;
  /** Ollama: append `/v1` to a native base URL. */
  appendV1?: boolean;
}

const SPECS: Record<string, ProviderSpec> = {
  openai: { id: "openai", family: "openai", defaultBaseUrl: "https://api.openai.com/v1", baseUrlEnv: "OPENAI_BASE_URL", apiKeyEnv: "OPENAI_API_KEY" },
  anthropic: { id: "anthropic", family: "anthropic", defaultBaseUrl: "https://api.anthropic.com/v1", apiKeyEnv: "ANTHROPIC_API_KEY" },
  "openai-compatible": { id: "openai-compatible", family: "openai-compatible", apiKeyOptional: true },
  deepseek: { id: "deepseek", family: "openai-compatible", defaultBaseUrl: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY" },
  vllm: { id: "vllm", family: "openai-compatible", defaultBaseUrl: "http://localhost:8000/v1", apiKeyOptional: true },
  ollama: { id: "ollama", family: "openai-compatible", defaultBaseUrl: "http://localhost:11434/v1", apiKeyOptional: true, appendV1: true },
  openrouter: { id: "openrouter", family: "openai-compatible", defaultBaseUrl: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY" },
  // No @ai-sdk/google is installed: Gemini is reached through Google's OpenAI-compatible endpoint.
  google: {
    id: "google",
    family: "openai-compatible",
    defaultBaseUrl: "https://generativelanguage.googleapis.com/v1beta/openai",
    apiKeyEnv: "GEMINI_API_KEY",
  },
  mimo: { id: "mimo", family: "openai-compatible", defaultBaseUrl: "https://api.xiaomimimo.com/v1", apiKeyEnv: "MIMO_API_KEY" },
  minimax: { id: "minimax", family: "openai-compatible", defaultBaseUrl: "https://api.minimax.io/v1", apiKeyEnv: "MINIMAX_API_KEY" },
  stepfun: { id: "stepfun", family: "openai-compatible", defaultBaseUrl: "https://api.stepfun.com/v1", apiKeyEnv: "STEPFUN_API_KEY" },
  mindie: { id: "mindie", family: "openai-compatible", apiKeyOptional: true },
};

/** DeerFlow class paths (and aliases) → our provider ids. */
const ALIASES: Record<string, string> = {
  "langchain_openai:ChatOpenAI": "openai",
  "langchain_openai:AzureChatOpenAI": "openai-compatible",
  "deerflow.models.patched_openai:PatchedChatOpenAI": "openai-compatible",
  "langchain_anthropic:ChatAnthropic": "anthropic",
  "deerflow.models.claude_provider:ClaudeChatModel": "anthropic",
  claude: "anthropic",
  "langchain_deepseek:ChatDeepSeek": "deepseek",
  "deerflow.models.patched_deepseek:PatchedChatDeepSeek": "deepseek",
  "deerflow.models.vllm_provider:VllmChatModel": "vllm",
  "langchain_ollama:ChatOllama": "ollama",
  "langchain_openrouter:ChatOpenRouter": "openrouter",
  "langchain_google_genai:ChatGoogleGenerativeAI": "google",
  gemini: "google",
  "deerflow.models.patched_mimo:PatchedChatMiMo": "mimo",
  "deerflow.models.patched_minimax:PatchedChatMiniMax": "minimax",
  "deerflow.models.patched_stepfun:PatchedChatStepFun": "stepfun",
  "deerflow.models.mindie_provider:MindIEChatModel": "mindie",
  openai_compatible: "openai-compatible",
  compatible: "openai-compatible",
};

/** DeerFlow providers we know and deliberately do not support, with the reason. */
const UNSUPPORTED: Record<string, string> = {
  "deerflow.models.openai_codex_provider:CodexChatModel":
    "the Codex provider (ChatGPT login via the Codex CLI) is not supported; use an OpenAI API key with `use: openai`",
};

/** Every accepted `use:` value, short names first. */
export function supportedProviderUses(): string[] {
  return [...Object.keys(SPECS), ...Object.keys(ALIASES)];
}

/**
 * Resolve a model entry's `use:` to a provider. Accepts our short names and
 * DeerFlow's class paths; anything else is a {@link ModelConfigError} listing
 * what is supported.
 */
export function resolveProvider(use: string, modelName?: string): ProviderSpec {
  const key = use.trim();
  const direct = SPECS[key] ?? SPECS[key.toLowerCase()];
  if (direct) return direct;
  const alias = ALIASES[key] ?? ALIASES[key.toLowerCase()];
  if (alias) return SPECS[alias];
  const where = modelName ? ` (model "${modelName}")` : "";
  if (UNSUPPORTED[key]) {
    throw new ModelConfigError(`Unsupported model provider "${use}"${where}: ${UNSUPPORTED[key]}.`, {
      code: "model_provider_unsupported",
      details: { use },
    });
  }
  throw new ModelConfigError(
    `Unknown model provider "${use}"${where}. Supported values of \`use:\` are the short names ` +
      `${Object.keys(SPECS).join(", ")} and the DeerFlow class paths ${Object.keys(ALIASES).filter((a) => a.includes(":")).join(", ")}.`,
    { code: "model_provider_unknown", details: { use, supported: supportedProviderUses() } },
  );
}
