import { useCallback, useState } from "react";
import type { FormEvent } from "react";
import { createUser, deleteUser, listUsers, setUserRole } from "../auth/api";
import type { ListedUser } from "../auth/api";
import { newPasswordProblem } from "../auth/messages";
import { useSession } from "../auth/session";
import { ErrorBanner } from "../components/ErrorBanner";
import { formatTime } from "../components/format-time";
import { useRemote } from "../components/use-remote";

/**
 * `#/users` (admins only): every account, creating one, and promoting or demoting between
 * `admin` and `user`, deleting one (not yourself here). The gateway refuses to demote or delete
 * the last admin; its answer is shown as is.
 */
export function UsersPage({ onClose }: { onClose(): void }) {
  const session = useSession();
  const users = useRemote(useCallback(() => listUsers(), []));
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<"admin" | "user">("user");
  const [busy, setBusy] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();

  const create = async (e: FormEvent) => {
    e.preventDefault();
    const problem = newPasswordProblem(password, password);
    if (problem) return users.setError(problem);
    setBusy("create");
    await users.run(async () => {
      const u = await createUser({ email: email.trim(), password, system_role: role });
      setNotice(`Created ${u.email ?? email.trim()} (${u.system_role ?? role}). Give them the password; they can change it in Account settings.`);
      setEmail("");
      setPassword("");
      setRole("user");
    });
    setBusy(undefined);
  };

  const toggleRole = async (u: ListedUser) => {
    const target = u.system_role === "admin" ? "user" : "admin";
    const self = u.id === session?.user.id;
    if (self && target === "user" && !confirm("Demote yourself? You lose access to the admin pages.")) return;
    setBusy(u.id);
    await users.run(async () => {
      await setUserRole(u.id, target);
      // The app's view of this browser's own role changes with it.
      if (!self) return;
      location.reload();
      return false;
    });
    setBusy(undefined);
  };

  const remove = async (u: ListedUser) => {
    if (!confirm(`Delete the account ${u.email}? They can no longer sign in.`)) return;
    setBusy(u.id);
    await users.run(async () => {
      await deleteUser(u.id);
      setNotice(`Deleted ${u.email}.`);
    });
    setBusy(undefined);
  };

  return (
    <main className="skills-page users-page" aria-label="Users">
      <div className="topbar">
        <h1 className="skills-title">Users</h1>
        <span className="spacer" />
        <button type="button" onClick={() => void users.refresh()}>
          Refresh
        </button>
        <button type="button" onClick={onClose}>
          Back to chat
        </button>
      </div>
      <ErrorBanner error={users.error} onDismiss={() => users.setError(undefined)} />
      <div className="skills-body">
        {notice && (
          <p role="status" data-testid="users-notice">
            {notice}
          </p>
        )}
        <form className="agent-form" onSubmit={(e) => void create(e)} aria-label="Create a user">
          <strong>New account</strong>
          <label>
            Email
            <input type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Initial password
            <input type="password" required autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value as "admin" | "user")}>
              <option value="user">user</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <div>
            <button type="submit" disabled={busy === "create"}>
              Create user
            </button>
          </div>
        </form>
        {users.value && (
          <div className="table-wrap">
            <table className="account-table" aria-label="All users">
              <thead>
                <tr>
                  <th>Email</th>
                  <th>Role</th>
                  <th>Sign-in</th>
                  <th>Created</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {users.value.map((u) => (
                  <tr key={u.id} data-testid="user-row" data-email={u.email} data-role={u.system_role}>
                    <td>
                      {u.email}
                      {u.id === session?.user.id && <span className="muted"> (you)</span>}
                    </td>
                    <td>{u.system_role}</td>
                    <td>{u.oauth_provider ? `SSO (${u.oauth_provider})` : "password"}</td>
                    <td>{formatTime(u.created_at)}</td>
                    <td>
                      <button type="button" disabled={busy === u.id} onClick={() => void toggleRole(u)}>
                        {u.system_role === "admin" ? "Make user" : "Make admin"}
                      </button>{" "}
                      {u.id !== session?.user.id && (
                        <button type="button" aria-label={`Delete ${u.email}`} disabled={busy === u.id} onClick={() => void remove(u)}>
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </main>
  );
}
