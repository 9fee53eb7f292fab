/**
 * A timestamp of the gateway for display: an ISO string, or epoch seconds or milliseconds
 * (DeerFlow's rows use both). Empty for a missing or unreadable value.
 */
export function formatTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "";
  const date = typeof value === "number" ? new Date(value < 1e12 ? value * 1000 : value) : new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}
