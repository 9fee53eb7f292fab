import { useEffect, useMemo, useState } from "react";
import { cancelKatexWaiter, loadedKatex, requestKatex } from "../markdown/math";
import { hasMath, renderMarkdown } from "../markdown/render";
import { hasCodeFence } from "../markdown/highlight";
import { useHighlighter } from "./use-highlighter";

/** Renders Markdown as sanitised HTML; KaTeX and highlight.js are fetched lazily the first time math or code appears. */
export function Markdown({ text, className }: { text: string; className?: string }) {
  const [, setTick] = useState(0);
  const math = hasMath(text);
  useEffect(() => {
    if (!math || loadedKatex()) return;
    const ready = () => setTick((t) => t + 1);
    requestKatex(ready);
    return () => cancelKatexWaiter(ready);
  }, [math]);
  const katexReady = Boolean(loadedKatex());
  const highlighterReady = useHighlighter(hasCodeFence(text));
  const html = useMemo(() => renderMarkdown(text), [text, katexReady, highlighterReady]);
  return <div className={`markdown ${className ?? ""}`} dangerouslySetInnerHTML={{ __html: html }} />;
}
