/** The login form's "remember me" choice and email, kept in this browser (never the password). */
const REMEMBER_KEY = "deerflow.auth.remember_login";
const EMAIL_KEY = "deerflow.auth.remembered_email";

/** The saved choice (remember me is on unless the user turned it off). */
export function loadRemembered(): { email: string; rememberMe: boolean } {
  try {
    const rememberMe = localStorage.getItem(REMEMBER_KEY) !== "0";
    return { email: rememberMe ? localStorage.getItem(EMAIL_KEY) ?? "" : "", rememberMe };
  } catch {
    return { email: "", rememberMe: true };
  }
}

/** Save the choice; the email only while "remember me" is on. */
export function saveRemembered(email: string, rememberMe: boolean): void {
  try {
    localStorage.setItem(REMEMBER_KEY, rememberMe ? "1" : "0");
    if (rememberMe) localStorage.setItem(EMAIL_KEY, email);
    else localStorage.removeItem(EMAIL_KEY);
  } catch {
    // Signing in must not depend on storage being available.
  }
}
