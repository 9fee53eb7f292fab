/**
 * Passwords for the CLI: a hidden prompt on a terminal, or one line on stdin
 * (`--password-stdin`). Never a command-line argument: argv is visible to
 * every user of the machine (`ps`, /proc/PID/cmdline) and lands in shell
 * history.
 */
import { UsageError } from "./common";

/** The user pressed Ctrl-C (or Ctrl-D on an empty line) at a hidden prompt. */
export class PromptAbortedError extends Error {
  constructor() {
    super("cancelled");
  }
}

/** Streams a hidden prompt reads from and writes to. */
export interface PromptStreams {
  input: NodeJS.ReadStream;
  /** Where the prompt goes (stderr: stdout stays clean for `--json` and pipes). */
  output: NodeJS.WritableStream;
}

const defaultStreams = (): PromptStreams => ({ input: process.stdin, output: process.stderr });

/**
 * Read one line from a terminal without echoing it. Backspace and Ctrl-U
 * edit, escape sequences (arrow keys) are ignored, Ctrl-C / Ctrl-D cancel
 * ({@link PromptAbortedError}). The terminal's mode is restored afterwards.
 */
export function readHiddenLine(prompt: string, streams: PromptStreams = defaultStreams()): Promise<string> {
  const { input, output } = streams;
  if (!input.isTTY) return Promise.reject(new Error("a hidden prompt needs a terminal"));
  const wasRaw = input.isRaw;
  // raw mode before the prompt: whatever is typed once the prompt shows is never echoed
  input.setRawMode(true);
  input.setEncoding("utf8");
  input.resume();
  output.write(prompt);
  return new Promise((resolve, reject) => {
    let chars: string[] = [];
    // 0: text, 1: after ESC, 2: inside a CSI/SS3 sequence (ends with a byte in @..~)
    let escape = 0;
    const finish = (result: () => void) => {
      input.off("data", onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write("\n");
      result();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (escape === 1) {
          escape = ch === "[" || ch === "O" ? 2 : 0;
          continue;
        }
        if (escape === 2) {
          if (ch >= "@" && ch <= "~") escape = 0;
          continue;
        }
        if (ch === "\r" || ch === "\n") return finish(() => resolve(chars.join("")));
        if (ch === "\u0003" || (ch === "\u0004" && chars.length === 0)) return finish(() => reject(new PromptAbortedError()));
        if (ch === "\u001b") escape = 1;
        else if (ch === "\u007f" || ch === "\b") chars = chars.slice(0, -1);
        else if (ch === "\u0015") chars = [];
        else if (ch >= " ") chars.push(ch);
      }
    };
    input.on("data", onData);
  });
}

/** Read all of stdin (for `--password-stdin`). */
export async function readAllStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of input) parts.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(parts).toString("utf8");
}

/**
 * The password piped on stdin: exactly one line (its newline is dropped).
 * Several lines are refused rather than guessing which one was meant.
 */
export function passwordFromStdinText(text: string, command: string, problem: PasswordRule): string {
  const password = text.replace(/\r?\n$/, "");
  if (/[\r\n]/.test(password)) throw new UsageError("--password-stdin expects exactly one line (the password) on stdin.", command);
  const why = problem(password);
  if (why) throw new UsageError(why, command);
  return password;
}

/** Why a password is refused (the account store's rule), or undefined. */
export type PasswordRule = (password: string) => string | undefined;

/** How a command gets a new password. */
export interface NewPasswordOptions {
  command: string;
  /** `--password-stdin` was given. */
  fromStdin: boolean;
  /** What the password is for, in the prompt ("Password for a@b.c"). */
  label: string;
  streams?: PromptStreams;
  /** The account store's password rule, applied before the password is sent anywhere. */
  rule: PasswordRule;
  /** Tries at the prompt before giving up (a mismatch or a refused password uses one). */
  attempts?: number;
}

/**
 * A new password: from stdin with `--password-stdin`, else asked twice at a
 * hidden prompt. Without a terminal and without the flag this is a usage
 * error that says how to pipe it.
 */
export async function readNewPassword(opts: NewPasswordOptions): Promise<string> {
  const streams = opts.streams ?? defaultStreams();
  if (opts.fromStdin) {
    // typed into a terminal, the password would be echoed on screen: the hidden prompt is the way there
    if (streams.input.isTTY) throw new UsageError("--password-stdin reads a pipe, but stdin is a terminal: leave the flag out to be asked at a hidden prompt.", opts.command);
    return passwordFromStdinText(await readAllStdin(streams.input), opts.command, opts.rule);
  }
  if (!streams.input.isTTY) {
    throw new UsageError(
      "no terminal to ask for the password. Pipe it instead: `printf '%s\\n' \"$PASSWORD\" | deerflow " +
        `${opts.command} … --password-stdin\` (passwords are never taken as arguments: other users can read them with ps).`,
      opts.command,
    );
  }
  const attempts = opts.attempts ?? 3;
  for (let i = 1; ; i++) {
    const first = await readHiddenLine(`${opts.label}: `, streams);
    let problem = opts.rule(first);
    if (!problem) {
      const second = await readHiddenLine("Repeat it: ", streams);
      if (second === first) return first;
      problem = "The two entries differ.";
    }
    if (i >= attempts) throw new UsageError(`${problem} Gave up after ${attempts} tries.`, opts.command);
    streams.output.write(`${problem} Try again.\n`);
  }
}
