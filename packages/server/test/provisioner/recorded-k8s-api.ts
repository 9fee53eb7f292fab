import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

/**
 * A stand-in Kubernetes API server on 127.0.0.1 speaking the REST and exec
 * wire formats for exactly the calls the provisioner's Kubernetes backend
 * makes, with response shapes recorded from the API (objects echoed with
 * `metadata.uid`/`resourceVersion`, `Status` bodies for errors, `PodList`
 * for lists, the v5 channel protocol for exec). Pods start `Pending` and run
 * from the second read, as a scheduler would make them.
 */

/** One recorded REST call. */
export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization?: string;
  body?: Record<string, unknown>;
}

/** One exec session as the server saw it. */
export interface RecordedExec {
  pod: string;
  argv: string[];
  protocol: string;
  stdin: Buffer;
  stdinClosed: boolean;
}

/** How an exec answers: write stdout/stderr frames, then `finish` with an exit code (null = close without status). */
export type ExecResponder = (exec: RecordedExec, io: { stdout(s: string | Buffer): void; stderr(s: string): void; finish(code: number | null): void; onStdinClosed(cb: () => void): void }) => void;

function statusBody(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

function exitStatus(code: number): Record<string, unknown> {
  if (code === 0) return { metadata: {}, status: "Success" };
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [sh], exit code ${code}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(code) }] },
  };
}

/** A running recorded API server. */
export interface RecordedK8sApi {
  url: string;
  calls: RecordedCall[];
  execs: RecordedExec[];
  /** Stored objects by `kind/name`. */
  objects: Map<string, Record<string, unknown>>;
  setExecResponder(r: ExecResponder): void;
  close(): Promise<void>;
}

export async function startRecordedK8sApi(): Promise<RecordedK8sApi> {
  const calls: RecordedCall[] = [];
  const execs: RecordedExec[] = [];
  const objects = new Map<string, Record<string, unknown>>();
  const reads = new Map<string, number>();
  let responder: ExecResponder = (_e, io) => io.finish(0);
  let uid = 0;

  const send = (res: http.ServerResponse, code: number, body: unknown) => {
    res.writeHead(code, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  const route = (kindPath: string): string | undefined =>
    ({ pods: "Pod", services: "Service", networkpolicies: "NetworkPolicy" })[kindPath];

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
      calls.push({ method: req.method ?? "", path: url.pathname, query: url.searchParams, authorization: req.headers.authorization, body });
      const m = /^\/(?:api\/v1|apis\/networking\.k8s\.io\/v1)\/namespaces\/([^/]+)\/(pods|services|networkpolicies)(?:\/([^/]+))?$/.exec(url.pathname);
      const kind = m ? route(m[2]) : undefined;
      if (!m || !kind) return send(res, 404, statusBody(404, "NotFound", "the server could not find the requested resource"));
      const [, ns, plural, name] = m;
      const key = (n: string) => `${kind}/${n}`;
      if (req.method === "POST" && !name) {
        const meta = (body?.metadata ?? {}) as Record<string, unknown>;
        const n = String(meta.name);
        if (objects.has(key(n))) return send(res, 409, statusBody(409, "AlreadyExists", `${plural} "${n}" already exists`));
        const stored = {
          ...body,
          metadata: { ...meta, namespace: ns, uid: `uid-${++uid}`, resourceVersion: String(uid), creationTimestamp: "2026-12-02T08:00:00Z" },
          ...(kind === "Pod" ? { status: { phase: "Pending", qosClass: "Burstable" } } : {}),
          ...(kind === "Service" ? { spec: { ...(body?.spec as object), clusterIP: "10.96.0.42", clusterIPs: ["10.96.0.42"] } } : {}),
        };
        objects.set(key(n), stored);
        return send(res, 201, stored);
      }
      if (req.method === "GET" && !name) {
        const selector = url.searchParams.get("labelSelector") ?? "";
        const wanted = selector ? selector.split(",").map((p) => p.split("=")) : [];
        const items = [...objects.entries()]
          .filter(([k]) => k.startsWith(`${kind}/`))
          .map(([, o]) => o)
          .filter((o) => wanted.every(([k, v]) => ((o.metadata as Record<string, unknown>).labels as Record<string, string> | undefined)?.[k] === v));
        return send(res, 200, { kind: `${kind}List`, apiVersion: kind === "NetworkPolicy" ? "networking.k8s.io/v1" : "v1", metadata: { resourceVersion: String(uid) }, items });
      }
      const obj = name ? objects.get(key(name)) : undefined;
      if (!obj) return send(res, 404, statusBody(404, "NotFound", `${plural} "${name}" not found`));
      if (req.method === "GET") {
        if (kind === "Pod") {
          const n = (reads.get(name as string) ?? 0) + 1;
          reads.set(name as string, n);
          if (n >= 2) obj.status = { phase: "Running", podIP: "10.244.0.7", qosClass: "Burstable" };
        }
        return send(res, 200, obj);
      }
      if (req.method === "DELETE") {
        objects.delete(key(name as string));
        reads.delete(name as string);
        return send(res, 200, kind === "Pod" ? obj : { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { name, kind: plural, uid: (obj.metadata as Record<string, unknown>).uid } });
      }
      return send(res, 405, statusBody(405, "MethodNotAllowed", "method not allowed"));
    });
  });

  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has("v5.channel.k8s.io") ? "v5.channel.k8s.io" : false) });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    calls.push({ method: "EXEC", path: url.pathname, query: url.searchParams, authorization: req.headers.authorization });
    if (!m || !objects.has(`Pod/${m[2]}`)) {
      socket.end("HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n\r\n" + JSON.stringify(statusBody(404, "NotFound", `pods "${m?.[2]}" not found`)));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const exec: RecordedExec = { pod: m[2], argv: url.searchParams.getAll("command"), protocol: ws.protocol, stdin: Buffer.alloc(0), stdinClosed: false };
      execs.push(exec);
      const closedCbs: Array<() => void> = [];
      let done = false;
      ws.on("message", (data: Buffer) => {
        if (data[0] === 0) exec.stdin = Buffer.concat([exec.stdin, data.subarray(1)]);
        if (data[0] === 255 && data[1] === 0) {
          exec.stdinClosed = true;
          for (const cb of closedCbs) cb();
        }
      });
      const frame = (ch: number, payload: Buffer) => ws.send(Buffer.concat([Buffer.from([ch]), payload]));
      responder(exec, {
        stdout: (s) => frame(1, Buffer.isBuffer(s) ? s : Buffer.from(s)),
        stderr: (s) => frame(2, Buffer.from(s)),
        finish: (code) => {
          if (done) return;
          done = true;
          if (code !== null) frame(3, Buffer.from(JSON.stringify(exitStatus(code))));
          ws.close(1000);
        },
        onStdinClosed: (cb) => (exec.stdinClosed ? cb() : closedCbs.push(cb)),
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    execs,
    objects,
    setExecResponder: (r) => {
      responder = r;
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
