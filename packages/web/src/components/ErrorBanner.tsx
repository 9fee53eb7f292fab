/** A dismissible error line at the top of a page (nothing when `error` is empty). */
export function ErrorBanner({ error, onDismiss }: { error?: string; onDismiss(): void }) {
  if (!error) return null;
  return (
    <div className="banner error" role="alert">
      {error}
      <button type="button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
