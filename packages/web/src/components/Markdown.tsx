import { useEffect, useMemo, useState } from "react";
import { cancelKatexWaiter, loadedKatex, requestKatex } from "../markdown/math";
import { hasMath, renderMarkdown } from "../markdown/render";

/** Renders Markdown as sanitised HTML; KaTeX is fetched lazily the first time math appears. */
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
  const html = useMemo(() => renderMarkdown(text), [text, katexReady]);
  return <div className={`markdown ${className ?? ""}`} dangerouslySetInnerHTML={{ __html: html }} />;
}
