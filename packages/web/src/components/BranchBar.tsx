import { useEffect, useState } from "react";
import { listBranches } from "../api/conversation";

/** Where this thread came from and which branches were taken from it (thread metadata `branch_*`). */
export function BranchBar(props: { threadId?: string; parentId?: string; refreshKey: unknown; onOpen: (threadId: string) => void }) {
  const { threadId, parentId, refreshKey, onOpen } = props;
  const [branches, setBranches] = useState<Array<{ thread_id: string; title: string }>>([]);
  useEffect(() => {
    let live = true;
    if (!threadId) {
      setBranches([]);
      return;
    }
    listBranches(threadId).then(
      (b) => live && setBranches(b),
      () => live && setBranches([]),
    );
    return () => {
      live = false;
    };
  }, [threadId, refreshKey]);
  if (!parentId && branches.length === 0) return null;
  return (
    <nav className="branches" aria-label="Branches" data-testid="branches">
      {parentId && (
        <button type="button" className="msg-action" onClick={() => onOpen(parentId)}>
          ← Parent conversation
        </button>
      )}
      {branches.length > 0 && <span className="muted">Branches:</span>}
      {branches.map((b, i) => (
        <button key={b.thread_id} type="button" className="msg-action" data-branch={b.thread_id} onClick={() => onOpen(b.thread_id)}>
          {b.title || `Branch ${i + 1}`}
        </button>
      ))}
    </nav>
  );
}
