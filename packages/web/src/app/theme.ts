import { useCallback, useEffect, useState } from "react";

/** Light/dark theme, remembered in localStorage, defaulting to the OS preference. */
export function useTheme(): ["light" | "dark", () => void] {
  const [theme, setTheme] = useState<"light" | "dark">(() => {
    const saved = localStorage.getItem("deerflow-theme");
    if (saved === "light" || saved === "dark") return saved;
    return matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  });
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem("deerflow-theme", theme);
  }, [theme]);
  return [theme, useCallback(() => setTheme((t) => (t === "dark" ? "light" : "dark")), [])];
}
