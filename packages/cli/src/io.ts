import { createInterface } from "node:readline";
import type { Interface } from "node:readline";

/** ANSI styles, applied only when colours are enabled. */
const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], blue: [34, 39], cyan: [36, 39], gray: [90, 39] } as const;

/** A style name. */
export type Style = keyof typeof CODES;

/** Colours only on a TTY, never with NO_COLOR; FORCE_COLOR forces them on. */
export function colorsEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return !!stream.isTTY && env.TERM !== "dumb";
}

/** Exit code when stdout's reader went away (128 + SIGPIPE), as other command-line tools end. */
export const BROKEN_PIPE_EXIT = 141;

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * End the process quietly when `stream`'s reader is gone (`deerflow run … | head`):
 * node ignores SIGPIPE, so the next write fails with EPIPE, and without a listener
 * that is an unhandled 'error' event with a stack trace. Other errors are rethrown.
 */
export function exitOnBrokenPipe(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(BROKEN_PIPE_EXIT);
    throw err;
  });
}

/** Terminal output: styled text (TTY only) and a spinner (TTY only). */
export class Terminal {
  readonly color: boolean;
  readonly tty: boolean;
  private spinnerTimer: NodeJS.Timeout | undefined;
  private spinnerLine = "";

  constructor(
    readonly out: NodeJS.WriteStream = process.stdout,
    readonly err: NodeJS.WriteStream = process.stderr,
  ) {
    this.color = colorsEnabled(out);
    this.tty = !!out.isTTY;
  }

  /** Apply a style when colours are on. */
  style(style: Style, text: string): string {
    if (!this.color) return text;
    const [open, close] = CODES[style];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  }

  /** Write raw text to stdout. */
  write(text: string): void {
    this.stopSpinner();
    this.out.write(text);
  }

  /** Write one line to stdout. */
  line(text = ""): void {
    this.write(`${text}\n`);
  }

  /** Write one line to stderr (styled red when colours are on). */
  error(text: string): void {
    this.stopSpinner();
    this.err.write(`${colorsEnabled(this.err) ? `\u001b[31m${text}\u001b[39m` : text}\n`);
  }

  /** Show a spinner with a label until the next write (TTY only; a no-op otherwise). */
  startSpinner(label: string): void {
    if (!this.tty) return;
    this.stopSpinner();
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let i = 0;
    this.spinnerLine = label;
    const draw = () => this.out.write(`\r${this.style("cyan", frames[i++ % frames.length])} ${label}`);
    draw();
    this.spinnerTimer = setInterval(draw, 80);
  }

  /** Remove the spinner line. */
  stopSpinner(): void {
    if (!this.spinnerTimer) return;
    clearInterval(this.spinnerTimer);
    this.spinnerTimer = undefined;
    this.out.write(`\r${" ".repeat(this.spinnerLine.length + 2)}\r`);
  }
}

/**
 * Line-by-line input that works for a TTY and for piped stdin alike: every
 * line is queued, so scripted answers are never lost between questions.
 * `ask` resolves `undefined` once input has ended.
 */
export class LineInput {
  private readonly queue: string[] = [];
  private waiters: Array<(line: string | undefined) => void> = [];
  private closed = false;
  readonly rl: Interface;

  constructor(input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stdout) {
    const terminal = !!input.isTTY && !!output.isTTY;
    this.rl = createInterface({ input, output: terminal ? output : undefined, terminal, historySize: 200 });
    this.rl.on("line", (line) => {
      const w = this.waiters.shift();
      if (w) w(line);
      else this.queue.push(line);
    });
    this.rl.on("close", () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w(undefined);
    });
  }

  /** Print a prompt and wait for the next line (undefined at end of input). */
  ask(prompt: string, out: NodeJS.WriteStream = process.stdout): Promise<string | undefined> {
    out.write(prompt);
    const queued = this.queue.shift();
    if (queued !== undefined) {
      if (!out.isTTY) out.write("\n");
      return Promise.resolve(queued);
    }
    if (this.closed) {
      if (!out.isTTY) out.write("\n");
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) =>
      this.waiters.push((line) => {
        if (!out.isTTY) out.write("\n");
        resolve(line);
      }),
    );
  }

  /** True once stdin has ended. */
  get ended(): boolean {
    return this.closed && this.queue.length === 0;
  }

  close(): void {
    this.rl.close();
  }
}
