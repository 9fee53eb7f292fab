import { useEffect, useState } from "react";
import { cancelHighlighterWaiter, loadedHighlighter, requestHighlighter } from "../markdown/highlight";

/** Whether highlight.js is loaded; when `wanted`, loads it and re-renders the caller once it is. */
export function useHighlighter(wanted: boolean): boolean {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!wanted || loadedHighlighter()) return;
    const ready = () => setTick((t) => t + 1);
    requestHighlighter(ready);
    return () => cancelHighlighterWaiter(ready);
  }, [wanted]);
  return Boolean(loadedHighlighter());
}
