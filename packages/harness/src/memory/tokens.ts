/**
 * Token estimates for the injection budget. This harness ships no BPE tables,
 * so `token_counting: tiktoken` is served by the same network-free estimate:
 * about four characters per token for Latin text and two per CJK character
 * (CJK text is denser, and a plain length/4 would overfill the budget).
 */

function isCjk(code: number): boolean {
  return (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3040 && code <= 0x30ff) || (code >= 0xac00 && code <= 0xd7a3);
}

/** Estimated tokens of `text`. */
export function estimateTokens(text: string): number {
  let cjk = 0;
  for (let i = 0; i < text.length; i++) if (isCjk(text.charCodeAt(i))) cjk++;
  return Math.ceil((text.length - cjk) / 4 + cjk / 2);
}
