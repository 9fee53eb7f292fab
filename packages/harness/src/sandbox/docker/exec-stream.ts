import { HeadTailBuffer } from "../output-buffer";

/**
 * The shell wrapper every sandbox command runs under (POSIX sh only, so any
 * image works). `docker exec` starts its process as a session and process
 * group leader, so:
 *  1. the wrapper prints its own pid — the group id of everything the command
 *     starts — as the first line of stdout, which the caller needs to kill the
 *     whole group on timeout or cancellation from a second exec;
 *  2. runs the command as a child and keeps its status;
 *  3. prints `NONCE STATUS` as the last bytes of stderr and kills its whole
 *     group (itself included), so background children holding the output pipes
 *     cannot keep the exec open — the same "the command's processes end with
 *     it" rule as the bubblewrap tier, where the pid namespace dies with it.
 * A command that forges the marker only forges its own exit code, which it
 * controls anyway.
 */
export const EXEC_WRAPPER = [
  "printf '%s\\n' \"$$\"",
  '/bin/sh -c "$2" </dev/null',
  "c=$?",
  "printf '%s %s\\n' \"$1\" \"$c\" >&2",
  "kill -KILL 0",
].join("\n");

/**
 * The wrapper of an exec started before its command is known (see
 * `DockerEngine.prepareExec`): the same steps as {@link EXEC_WRAPPER}, but the
 * command arrives on stdin as lines ending with a line that is the nonce, and
 * the pid line is printed only then (so an exec whose stream ended without
 * one never ran its command: safe to run it again elsewhere). A stream
 * closed before that line (the sandbox discarded the exec, the service
 * stopped, the container died) runs nothing: the wrapper kills its group.
 */
export const STDIN_EXEC_WRAPPER = [
  "c=",
  "ok=",
  "while IFS= read -r l; do",
  '  if [ "$l" = "$1" ]; then ok=1; break; fi',
  '  c="$c$l',
  '"',
  "done",
  '[ -n "$ok" ] || kill -KILL 0',
  // The pid line comes once the command is in: without it the caller knows the command never started.
  "printf '%s\\n' \"$$\"",
  '/bin/sh -c "$c" </dev/null',
  "c=$?",
  "printf '%s %s\\n' \"$1\" \"$c\" >&2",
  "kill -KILL 0",
].join("\n");

/** The argv of a {@link STDIN_EXEC_WRAPPER} exec; its command is sent later with {@link stdinCommand}. */
export function stdinWrappedArgv(nonce: string): string[] {
  return ["/bin/sh", "-c", STDIN_EXEC_WRAPPER, "deerflow-exec", nonce];
}

/** The stdin bytes that hand `command` to a {@link STDIN_EXEC_WRAPPER} exec. */
export function stdinCommand(nonce: string, command: string): string {
  return `${command}${command.endsWith("\n") ? "" : "\n"}${nonce}\n`;
}

/** The argv of a wrapped command; `nonce` is random per command. */
export function wrappedArgv(nonce: string, command: string): string[] {
  return ["/bin/sh", "-c", EXEC_WRAPPER, "deerflow-exec", nonce, command];
}

/** Kills the process group `pgid` from a second exec (same uid as the command). */
export function killGroupArgv(pgid: number): string[] {
  return ["/bin/sh", "-c", 'kill -KILL "-$1" 2>/dev/null; exit 0', "deerflow-kill", String(pgid)];
}

/** What {@link ExecDemuxer} captured. */
export interface DemuxedOutput {
  stdout: string;
  stderr: string;
  truncated: boolean;
  /** The wrapper's pid line (process group id), once seen. */
  pid?: number;
  /** The command's status from the wrapper's final marker, when it ended normally. */
  status?: number;
}

/** Longest marker tail held back from stderr: nonce + space + status + newline. */
const MARKER_HOLD = 64;

/**
 * Splits Docker's multiplexed exec stream (8-byte frame headers: stream
 * type, 3 zero bytes, big-endian length) into capped stdout/stderr buffers,
 * peeling off the wrapper's pid line (start of stdout) and status marker
 * (end of stderr). Without a wrapper (`raw`), bytes pass through unchanged.
 */
export class ExecDemuxer {
  private pending: Buffer = Buffer.alloc(0);
  private frameType = -1;
  private frameLeft = 0;
  private readonly out: HeadTailBuffer;
  private readonly err: HeadTailBuffer;
  private pidLine: Buffer | undefined;
  private pidValue?: number;
  private errHold: Buffer = Buffer.alloc(0);
  private readonly nonce?: string;
  /** Called once with the pid line's value. */
  onPid?: (pid: number) => void;
  /** Called once when held-back stderr ends with the wrapper's status marker (the command has ended). */
  onMarker?: () => void;
  private markerSeen = false;

  constructor(maxOutputBytes: number, nonce?: string) {
    this.out = new HeadTailBuffer(maxOutputBytes);
    this.err = new HeadTailBuffer(maxOutputBytes);
    this.nonce = nonce;
    if (nonce) this.pidLine = Buffer.alloc(0);
  }

  /** Feed raw bytes from the hijacked connection. */
  push(chunk: Buffer): void {
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (data.length) {
      if (this.frameLeft === 0) {
        if (data.length < 8) {
          this.pending = Buffer.from(data);
          return;
        }
        this.frameType = data[0];
        this.frameLeft = data.readUInt32BE(4);
        data = data.subarray(8);
        continue;
      }
      const take = Math.min(this.frameLeft, data.length);
      this.payload(this.frameType, data.subarray(0, take));
      this.frameLeft -= take;
      data = data.subarray(take);
    }
  }

  private payload(type: number, bytes: Buffer): void {
    if (type === 2) {
      if (!this.nonce) return this.err.push(bytes);
      const all = this.errHold.length ? Buffer.concat([this.errHold, bytes]) : bytes;
      const keep = Math.min(all.length, MARKER_HOLD);
      if (all.length > keep) this.err.push(all.subarray(0, all.length - keep));
      this.errHold = Buffer.from(all.subarray(all.length - keep));
      if (!this.markerSeen && this.onMarker && this.markerAt(this.errHold.toString("latin1")) !== undefined) {
        this.markerSeen = true;
        this.onMarker();
      }
      return;
    }
    if (this.pidLine !== undefined) {
      const all = Buffer.concat([this.pidLine, bytes]);
      const nl = all.indexOf(0x0a);
      if (nl < 0 && all.length < 32) {
        this.pidLine = all;
        return;
      }
      this.pidLine = undefined;
      const value = Number(all.subarray(0, nl < 0 ? 0 : nl).toString("latin1"));
      if (Number.isInteger(value) && value > 0) {
        this.pidValue = value;
        this.onPid?.(value);
      }
      bytes = all.subarray(nl + 1);
      if (!bytes.length) return;
    }
    this.out.push(bytes);
  }

  /** The process group id, once the wrapper reported it. */
  get pid(): number | undefined {
    return this.pidValue;
  }

  /** Where the status marker starts in `text` when `text` ends with it. */
  private markerAt(text: string): { at: number; status: number } | undefined {
    const marker = `${this.nonce} `;
    const at = text.lastIndexOf(marker);
    const m = at >= 0 ? /^(\d{1,3})\n$/.exec(text.slice(at + marker.length)) : null;
    return m ? { at, status: Number(m[1]) } : undefined;
  }

  /** Finish: release held-back stderr, parse the marker. */
  finish(): DemuxedOutput {
    let status: number | undefined;
    if (this.errHold.length && this.nonce) {
      const found = this.markerAt(this.errHold.toString("latin1"));
      if (found) {
        status = found.status;
        this.err.push(this.errHold.subarray(0, found.at));
      } else {
        this.err.push(this.errHold);
      }
      this.errHold = Buffer.alloc(0);
    }
    return {
      stdout: this.out.text(),
      stderr: this.err.text(),
      truncated: this.out.truncated || this.err.truncated,
      pid: this.pidValue,
      status,
    };
  }
}
