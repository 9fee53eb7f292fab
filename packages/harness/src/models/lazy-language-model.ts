import type { LanguageModelV3 } from "@ai-sdk/provider";

/**
 * A language model whose provider package is imported by its first call.
 * The AI SDK providers (Anthropic, OpenAI, OpenAI-compatible) are among the
 * largest modules a gateway loads; building the model objects at config load
 * no longer loads them, only a model that is actually called does (once).
 */
export function lazyLanguageModel(provider: string, modelId: string, load: () => Promise<LanguageModelV3>): LanguageModelV3 {
  let model: Promise<LanguageModelV3> | undefined;
  const get = () => (model ??= load());
  return {
    specificationVersion: "v3",
    provider,
    modelId,
    get supportedUrls() {
      return get().then((m) => m.supportedUrls);
    },
    doGenerate: async (options) => (await get()).doGenerate(options),
    doStream: async (options) => (await get()).doStream(options),
  };
}
