import { Icon } from "../components/Icon";
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { createApiClient } from "../api/client";
import { createBranch } from "../api/conversation";
import { AgentsPage } from "../pages/AgentsPage";
import { visiblePages } from "../pages";
import { signOut, useSession } from "../auth/session";
import { fetchModels, type ModelInfo } from "../api/rest";
import { ArtifactsPanel } from "../components/ArtifactsPanel";
import { BranchBar } from "../components/BranchBar";
import { DemoBanner } from "../components/DemoBanner";
import { Composer } from "../components/Composer";
import { MessageList } from "../components/MessageList";
import { Sidebar, type ThreadEntry } from "../components/Sidebar";
import { TodoList } from "../components/TodoList";
import { Toasts } from "../components/Toasts";
import { groupMessages } from "../stream/groups";
import { effectiveSettings, type ChatSettings } from "../stream/settings";
import { describe, ThreadController } from "./thread-controller";
import { useTheme } from "./theme";

function threadFromUrl(): string | undefined {
  return new URLSearchParams(location.search).get("thread") ?? undefined;
}

function setUrlThread(id: string | undefined): void {
  const url = new URL(location.href);
  if (id) url.searchParams.set("thread", id);
  else url.searchParams.delete("thread");
  history.pushState(null, "", url);
}

/** The chat workspace: sidebar, conversation, composer and artifacts panel. */
export function App() {
  const client = useMemo(() => createApiClient(), []);
  const controller = useMemo(() => new ThreadController(client, sessionStorage), [client]);
  const view = useSyncExternalStore(controller.subscribe, controller.getView);
  const [threads, setThreads] = useState<ThreadEntry[]>([]);
  const [threadsError, setThreadsError] = useState<string | undefined>();
  const [models, setModels] = useState<ModelInfo[]>([]);
  const [settings, setSettings] = useState<ChatSettings>({ thinking: true, planMode: false, reasoningEffort: "medium" });
  // What runs are sent with: the toolbar choices less what the selected model cannot do.
  const runSettings = useMemo(() => effectiveSettings(settings, models), [settings, models]);
  const [files, setFiles] = useState<File[]>([]);
  const [panelOpen, setPanelOpen] = useState(false);
  const [selected, setSelected] = useState<string | undefined>();
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [theme, toggleTheme] = useTheme();
  const seenArtifacts = useRef(0);
  const session = useSession();
  // Admin pages are not offered to a `user` (and not reachable by typing their #hash either).
  const pages = useMemo(() => visiblePages(session), [session]);

  const refreshThreads = useCallback(async () => {
    try {
      const list = await client.threads.search({ limit: 50, offset: 0, sort_by: "updated_at", sort_order: "desc", select: ["thread_id", "updated_at", "values", "metadata"] });
      setThreads(list.map((t) => ({ thread_id: t.thread_id, updated_at: t.updated_at, title: String((t.values as { title?: string } | null)?.title ?? "") })));
      setThreadsError(undefined);
    } catch (err) {
      setThreadsError(`Server unreachable: ${describe(err)}`);
    }
  }, [client]);

  const open = useCallback(
    (id: string | undefined) => {
      setSelected(undefined);
      setPanelOpen(false);
      seenArtifacts.current = 0;
      setFiles([]);
      if (id) void controller.load(id);
      else controller.newThread(crypto.randomUUID());
    },
    [controller],
  );

  useEffect(() => {
    controller.onRunFinished = () => void refreshThreads();
    controller.onThreadCreated = (id) => {
      setUrlThread(id);
      void refreshThreads();
    };
    open(threadFromUrl());
    void refreshThreads();
    fetchModels()
      .then((m) => {
        setModels(m);
        setSettings((s) => (s.modelName || !m[0] ? s : { ...s, modelName: m[0].name }));
      })
      .catch(() => setModels([]));
    const onPop = () => open(threadFromUrl());
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, [controller, open, refreshThreads]);

  // Auto title: patch the sidebar as soon as the stream reports it.
  useEffect(() => {
    if (!view.title || !view.threadId) return;
    setThreads((ts) => (ts.some((t) => t.thread_id === view.threadId && t.title !== view.title) ? ts.map((t) => (t.thread_id === view.threadId ? { ...t, title: view.title } : t)) : ts));
  }, [view.title, view.threadId]);

  // Open the panel when new files are presented.
  useEffect(() => {
    if (view.artifacts.length > seenArtifacts.current) {
      if (seenArtifacts.current > 0 || controller.isRunning()) {
        setPanelOpen(true);
        setSelected(view.artifacts[view.artifacts.length - 1]);
      }
      seenArtifacts.current = view.artifacts.length;
    }
  }, [view.artifacts, controller]);

  const running = view.phase === "starting" || view.phase === "streaming";
  const items = useMemo(() => groupMessages(view, running), [view, running]);

  // `#/agents`, `#/skills`, `#/mcp`, `#/memory` show a page in place of the conversation.
  const [hash, setHash] = useState(() => location.hash);
  const page = pages.find((p) => p.hash === hash);
  useEffect(() => {
    const onHash = () => setHash(location.hash);
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  // Thread metadata: the branch parent (for the branch bar) and the custom agent a thread chats with.
  const [threadMeta, setThreadMeta] = useState<Record<string, unknown>>({});
  useEffect(() => {
    if (!view.threadId) return;
    let live = true;
    client.threads.get(view.threadId).then(
      (t) => {
        if (!live) return;
        const meta = (t.metadata ?? {}) as Record<string, unknown>;
        setThreadMeta(meta);
        setSettings((st) => ({ ...st, agentName: typeof meta.agent_name === "string" ? meta.agent_name : undefined }));
      },
      () => live && setThreadMeta({}),
    );
    return () => {
      live = false;
    };
  }, [client, view.threadId, view.runId]);

  const onRename = async (id: string, title: string) => {
    try {
      await client.threads.updateState(id, { values: { title } });
      setThreads((ts) => ts.map((t) => (t.thread_id === id ? { ...t, title } : t)));
      if (id === view.threadId) controller.setTitle(title);
    } catch (err) {
      setThreadsError(`Rename failed: ${describe(err)}`);
    }
  };
  const onDelete = async (id: string) => {
    try {
      await client.threads.delete(id);
    } catch (err) {
      if ((err as { status?: number }).status !== 404) {
        setThreadsError(`Delete failed: ${describe(err)}`);
        return;
      }
    }
    setThreads((ts) => ts.filter((t) => t.thread_id !== id));
    if (id === view.threadId) {
      setUrlThread(undefined);
      open(undefined);
    }
  };

  return (
    <div
      className={`app ${sidebarOpen ? "sidebar-open" : ""} ${panelOpen ? "panel-open" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        const dropped = Array.from(e.dataTransfer.files ?? []);
        if (dropped.length) setFiles((f) => [...f, ...dropped]);
      }}
    >
      <Sidebar
        threads={threads}
        activeId={view.threadId}
        error={threadsError}
        onSelect={(id) => {
          setSidebarOpen(false);
          setUrlThread(id);
          open(id);
        }}
        onNew={() => {
          setSidebarOpen(false);
          setSettings((st) => ({ ...st, agentName: undefined }));
          setUrlThread(undefined);
          open(undefined);
        }}
        onRename={onRename}
        onDelete={onDelete}
        onRetry={refreshThreads}
      />
      {page ? (
        <page.component onClose={() => (location.hash = "")} />
      ) : hash === "#/agents" ? (
        <AgentsPage
          models={models}
          onClose={() => (location.hash = "")}
          onChat={(name) => {
            location.hash = "";
            setUrlThread(undefined);
            open(undefined);
            setSettings((st) => ({ ...st, agentName: name }));
          }}
        />
      ) : (
      <main className="chat">
        <header className="topbar">
          <button type="button" className="icon menu" aria-label="Toggle conversation list" onClick={() => setSidebarOpen((o) => !o)}>
            <Icon name="menu" />
          </button>
          <h1 className="title" data-testid="thread-title">{view.title || "New chat"}</h1>
          <button type="button" className="icon" aria-label={`Files (${view.artifacts.length})`} onClick={() => setPanelOpen((o) => !o)} disabled={!view.artifacts.length}>
            <Icon name="files" /> {view.artifacts.length || ""}
          </button>
          <button type="button" className="icon" aria-label="Agents" onClick={() => (location.hash = "#/agents")}>
            Agents
          </button>
          {pages.map((p) => (
            <button key={p.hash} type="button" className="icon" aria-label={p.label} onClick={() => (location.hash = p.hash)}>
              {p.label}
            </button>
          ))}
          {session?.authEnabled && (
            <button type="button" className="icon" aria-label="Sign out" title={`Signed in as ${session.user.email}`} onClick={() => void signOut().catch((err) => setThreadsError(`Sign-out failed: ${describe(err)}`))}>
              Sign out
            </button>
          )}
          <button type="button" className="icon" aria-label={theme === "dark" ? "Switch to light theme" : "Switch to dark theme"} onClick={toggleTheme}>
            <Icon name={theme === "dark" ? "sun" : "moon"} />
          </button>
        </header>
        <DemoBanner />
        {view.error && (
          <div className="banner error" role="alert" data-testid="error-banner">
            {view.error}
            <button type="button" onClick={() => void controller.retry()}>
              Retry
            </button>
          </div>
        )}
        <BranchBar
          threadId={view.threadId}
          parentId={typeof threadMeta.branch_parent_thread_id === "string" ? threadMeta.branch_parent_thread_id : undefined}
          refreshKey={threads}
          onOpen={(id) => {
            setUrlThread(id);
            open(id);
          }}
        />
        {settings.agentName && <div className="branches muted" data-testid="agent-chip">Agent: {settings.agentName}</div>}
        <TodoList todos={view.todos} />
        {items.length === 0 && view.phase !== "starting" ? (
          <div className="welcome">
            <h2>What can I do for you?</h2>
            <p>Ask a question, attach files, or switch on plan mode for multi-step work.</p>
          </div>
        ) : (
          <MessageList
            items={items}
            streaming={running}
            onRetry={() => void controller.retry()}
            onAnswer={(item, answer) => void controller.answerClarification(item.request, answer, runSettings)}
            onRegenerate={(id) => void controller.regenerate(id, runSettings)}
            onEdit={(id, text) => void controller.editMessage(id, text, runSettings)}
            onBranch={(id) =>
              void createBranch(view.threadId!, id).then(
                (b) => {
                  setUrlThread(b.thread_id);
                  open(b.thread_id);
                  void refreshThreads();
                },
                (err) => setThreadsError(`Branch failed: ${describe(err)}`),
              )
            }
          />
        )}
        <Composer
          running={running}
          models={models}
          settings={settings}
          files={files}
          onSettings={setSettings}
          onFiles={setFiles}
          onStop={() => void controller.stop()}
          onSend={(text) => {
            const toSend = files;
            setFiles([]);
            void controller.send(text, toSend, runSettings);
          }}
        />
        {dragging && <div className="drop-overlay">Drop files to attach</div>}
      </main>
      )}
      {panelOpen && view.threadId && view.artifacts.length > 0 && (
        <ArtifactsPanel threadId={view.threadId} artifacts={view.artifacts} selected={selected} onSelect={setSelected} onClose={() => setPanelOpen(false)} />
      )}
      <Toasts notices={view.notices} onDismiss={(id) => controller.dismiss(id)} />
    </div>
  );
}
