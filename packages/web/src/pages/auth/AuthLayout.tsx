import type { ReactNode } from "react";
import { useTheme } from "../../app/theme";

/** The centred card the sign-in and setup pages share (with the app's saved theme). */
export function AuthLayout({ title, subtitle, children }: { title: string; subtitle?: string; children: ReactNode }) {
  useTheme();
  return (
    <main className="auth-page">
      <section className="auth-card" aria-label={title}>
        <div className="auth-brand">DeerFlow</div>
        <h1 className="auth-title">{title}</h1>
        {subtitle && <p className="muted auth-subtitle">{subtitle}</p>}
        {children}
      </section>
    </main>
  );
}

/** An inline error under a form (announced to screen readers). */
export function FormError({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <p className="auth-error" role="alert" data-testid="auth-error">
      {text}
    </p>
  );
}

/** The "Confirm password" field of a form that sets a new password. */
export function ConfirmPasswordField({ value, onChange }: { value: string; onChange(value: string): void }) {
  return (
    <label>
      Confirm password
      <input type="password" name="confirm-password" autoComplete="new-password" required value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

/** The "Remember me" checkbox: a session that outlives the browser instead of one that ends with it. */
export function RememberMeToggle({ checked, onChange }: { checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label className="toggle">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      Remember me
    </label>
  );
}
