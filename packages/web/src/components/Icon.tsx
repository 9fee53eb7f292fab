/** Inline SVG icons (no icon font, no emoji dependency). */
const PATHS = {
  plus: "M12 5v14M5 12h14",
  clip: "M21 11.5l-8.5 8.5a5 5 0 0 1-7-7l8.5-8.5a3.5 3.5 0 0 1 5 5L10.5 18a2 2 0 0 1-3-3l7.5-7.5",
  trash: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13",
  pencil: "M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4",
  files: "M4 5h6l2 2h8v12H4z",
  tool: "M14.7 6.3a4 4 0 0 0-5.4 5.2L3 17.8 6.2 21l6.3-6.3a4 4 0 0 0 5.2-5.4l-2.6 2.6-2.5-.6-.6-2.5z",
  alert: "M12 3l10 18H2zM12 10v5M12 18v.5",
  spinner: "M12 3a9 9 0 1 0 9 9",
  menu: "M4 6h16M4 12h16M4 18h16",
  download: "M12 4v11M7 10l5 5 5-5M5 20h14",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  sun: "M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 2v2M12 20v2M2 12h2M20 12h2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4",
  moon: "M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5z",
  close: "M6 6l12 12M18 6L6 18",
  send: "M4 12l16-8-6 16-2-6z",
  stop: "M7 7h10v10H7z",
} as const;

/** Name of an available icon. */
export type IconName = keyof typeof PATHS;

/** A 16px stroke icon; decorative (aria-hidden) — label the surrounding button instead. */
export function Icon({ name, size = 16, className }: { name: IconName; size?: number; className?: string }) {
  return (
    <svg className={`icon-svg ${className ?? ""}`} width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d={PATHS[name]} />
    </svg>
  );
}
