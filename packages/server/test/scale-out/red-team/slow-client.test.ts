/**
 * Red team: resource exhaustion through a client that stops reading. A run
 * on P1 writes megabytes of events; one client joins it through P2 (the
 * reader process) and another through P1 (the owner) and never reads, on a
 * socket with a tiny receive buffer so the kernel cannot absorb the flood.
 * Without a bound, each such connection pins everything the run writes in
 * the server's memory for as long as the socket stays open. With the
 * backlog cap both are cut off once they read nothing for the stall
 * interval, while a client that reads (even behind a burst far larger than
 * the cap) gets every event and the end.
 */
import { spawn } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpScriptStep } from "@deerflow-ts/harness/testing";
import { createThread, joinRun, runIdOf, streamRun, waitForRun } from "../helpers/runs-api";
import { requestShape } from "../helpers/scripted-router";
import { startDeployment } from "./deployment";
import type { Deployment } from "./deployment";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

/** 40,000 words of 200 characters: about 8 MB of answer, streamed as fast as it goes. */
const step: HttpScriptStep = (req) => {
  const { human } = requestShape(req);
  if (!human.includes("[flood]")) return { text: `answer: ${human}` };
  const word = "x".repeat(199);
  return { text: Array.from({ length: 40_000 }, () => word).join(" ") };
};

/**
 * A client in another process (Python: it can shrink its receive buffer)
 * that sends the GET and reads nothing until it gets a line on stdin, then
 * reads to the end and prints what it got.
 */
const STALLED_CLIENT = `
import json, socket, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\\r\\nHost: %s:%d\\r\\nAccept: text/event-stream\\r\\n\\r\\n" % (path, host, port)).encode())
print("sent", flush=True)
sys.stdin.readline()
s.settimeout(20)
got = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
except Exception as e:
    pass
print(json.dumps({"bytes": len(got), "sawEnd": b"event: end" in got, "head": got[:12].decode("latin-1")}), flush=True)
`;

interface Stalled {
  release(): Promise<{ bytes: number; sawEnd: boolean; head: string }>;
}

async function stalledClient(url: string, path: string): Promise<Stalled> {
  const u = new URL(url);
  const child = spawn("python3", ["-c", STALLED_CLIENT, u.hostname, u.port, path], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const lines: (() => void)[] = [];
  child.stdout!.on("data", (b: Buffer) => {
    out += b.toString();
    for (const l of lines.splice(0)) l();
  });
  const line = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (out.split("\n").length > n ? resolve() : child.exitCode !== null ? reject(new Error(`stalled client exited: ${out}`)) : lines.push(check));
      check();
    });
  await line(1);
  return {
    async release() {
      child.stdin!.write("go\n");
      await line(2);
      return JSON.parse(out.split("\n")[1]!);
    },
  };
}

describe.skipIf(!PG || !REDIS)("red team: a client that stops reading", { timeout: 60_000 }, () => {
  let d: Deployment;

  beforeAll(async () => {
    // a stream window large enough that the reader process never falls out of it (no gap ends the test early);
    // a 256 KiB backlog cap so that a few megabytes show the bound
    d = await startDeployment({ processes: 2, auth: false, step, queueMaxsize: 100_000, env: { DEERFLOW_SSE_MAX_BACKLOG_BYTES: String(256 * 1024) } });
  }, 60_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") console.error(d?.output().slice(-6000));
  });

  afterAll(async () => {
    await d?.stop();
  });

  it("is cut off on the reader process and on the owner; a reading client gets every event and the end", async () => {
    const [p1, p2] = d.procs;
    const tid = await createThread(p1!.api);
    const s = await streamRun(p1!.api, tid, "[flood] fill your buffers");
    const runId = await runIdOf(s);
    const path = `/api/threads/${tid}/runs/${runId}/stream`;
    const [onReader, onOwner] = await Promise.all([stalledClient(p2!.url, path), stalledClient(p1!.url, path)]);
    const reading = await joinRun(p2!.api, tid, runId);
    const [framesOwner, framesReader] = await Promise.all([s.done, reading.done]);
    expect(framesOwner.at(-1)?.event).toBe("end");
    expect(framesReader.at(-1)?.event).toBe("end");
    expect(await waitForRun(p2!.api, tid, runId, (st) => st !== "running")).toBe("success");
    const total = JSON.stringify(framesReader).length;
    expect(total).toBeGreaterThan(8_000_000);
    // each process says it let its silent client go (it read nothing for the stall interval while over the cap)
    for (const p of [p1!, p2!]) await p.waitFor(new RegExp(`disconnected a client of run ${runId}'s stream: it read nothing`), 30_000);
    for (const [where, stalled] of [["reader process", onReader], ["owner", onOwner]] as const) {
      const got = await stalled.release();
      // it was answered (the stream started) and then let go well before the end of the run
      expect(got.head, where).toBe("HTTP/1.1 200");
      expect(got.sawEnd, `${where}: a client that read nothing was still sent the whole run`).toBe(false);
      expect(got.bytes, where).toBeLessThan(total / 2);
    }
    // both processes still serve
    for (const p of [p1!, p2!]) expect((await fetch(`${p.url}/health`)).status).toBe(200);
  });
});
