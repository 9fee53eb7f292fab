import { contentText } from "../messages";
import type { AIMessage, Message } from "../messages";

/** One bash execution recorded in a sub-agent's messages (its call and the output it returned). */
export interface BashExecution {
  command: string;
  output: string;
}

/** Evidence caps of the `tests_passed` check. */
export const TESTS_EVIDENCE_COMMAND_CAP = 500;
export const TESTS_EVIDENCE_TAIL_CAP = 1000;

/**
 * Bash executions recorded in `messages`: each `bash` tool call paired with
 * its non-error ToolMessage, in order. A call the audit blocked or that
 * failed to start has an error result and is not an execution.
 */
export function recordedBashExecutions(messages: readonly Message[], toolNames: readonly string[] = ["bash"]): BashExecution[] {
  const results = new Map<string, Message>();
  for (const m of messages) if (m.type === "tool" && m.status !== "error") results.set(m.tool_call_id, m);
  const out: BashExecution[] = [];
  for (const m of messages) {
    if (m.type !== "ai") continue;
    for (const call of (m as AIMessage).tool_calls ?? []) {
      if (!toolNames.includes(call.name)) continue;
      const command = call.args?.command;
      const res = results.get(call.id);
      if (typeof command !== "string" || !res) continue;
      out.push({ command, output: contentText(res.content) });
    }
  }
  return out;
}

/** Result of checking one `tests_passed:<command>` criterion. */
export interface TestsPassedCheck {
  checked: boolean;
  holds: boolean;
  detail: string;
}

const PASS_SHAPES = [/\b[1-9]\d*\s+(tests?\s+)?passed\b/i, /^OK\b/m, /test result: ok\b/, /^ok\s+\S+/m, /BUILD SUCCESS/, /all tests passed/i];
const FAIL_SHAPES = [/\b[1-9]\d*\s+(tests?\s+)?failed\b/i, /\b[1-9]\d*\s+errors?\b/i, /^FAILED\b/m, /^ERROR\s+\S/m, /test result: FAILED/, /^FAIL\s+\S/m, /BUILD FAILURE/];
const ZERO_SHAPES = [/(^|[^\d])0\s+(tests?\s+)?passed\b/i, /\[no test files\]/, /Ran 0 tests/, /No test files found/i, /no tests ran/i];
const EXIT_CODE = /(?:^|\n)Exit Code: (-?\d+)\s*$/;

function norm(cmd: string): string {
  return cmd.replace(/\s+/g, " ").trim();
}

/** Split on shell list operators, keeping which operator led to each segment. */
function segments(cmd: string): { op: string; text: string }[] {
  const out: { op: string; text: string }[] = [];
  const re = /(\|\||&&|;|\||\n)/g;
  let last = 0;
  let op = "";
  let m: RegExpExecArray | null;
  while ((m = re.exec(cmd))) {
    out.push({ op, text: norm(cmd.slice(last, m.index)) });
    op = m[1] === "\n" ? ";" : m[1];
    last = m.index + m[0].length;
  }
  out.push({ op, text: norm(cmd.slice(last)) });
  return out.filter((s) => s.text);
}

/**
 * How a recorded command relates to the criterion's command:
 * `exact` (same command, or the last step of an `&&` chain such as `cd dir && cmd`, so the
 * recorded exit status is the command's), `unattributable` (present, but
 * redirected, piped, backgrounded or followed by other steps, so status and
 * output may not be the command's), or `none`.
 */
function attribution(recorded: string, wanted: string): "exact" | "unattributable" | "none" {
  const w = norm(wanted);
  const segs = segments(recorded);
  const at = segs.findIndex((s) => s.text === w || s.text.startsWith(`${w} `) && /[<>&]/.test(s.text.slice(w.length)));
  if (at < 0) return "none";
  const seg = segs[at];
  if (seg.text !== w) return "unattributable"; // redirection or background on the command itself
  if (at !== segs.length - 1) return "unattributable";
  if (segs.slice(1, at + 1).some((s) => s.op !== "&&")) return "unattributable";
  return "exact";
}

/**
 * Decide `tests_passed:<command>` from recorded executions only (never re-run):
 * the newest execution attributable to the command must exit 0 (no
 * `Exit Code: N` marker) and its output tail must show a pass summary with
 * no failure summary and no "zero tests" summary.
 */
export function checkTestsPassed(command: string, executions: readonly BashExecution[]): TestsPassedCheck {
  const wanted = norm(command);
  if (!wanted) return { checked: false, holds: false, detail: "no command given" };
  for (let i = executions.length - 1; i >= 0; i--) {
    const ex = executions[i];
    const how = attribution(ex.command, wanted);
    if (how === "none") continue;
    const shown = norm(ex.command).slice(0, TESTS_EVIDENCE_COMMAND_CAP);
    if (how === "unattributable") {
      return { checked: false, holds: false, detail: `newest matching execution \`${shown}\` cannot be attributed to the command (redirected, piped or followed by other steps)` };
    }
    const tail = ex.output.slice(-TESTS_EVIDENCE_TAIL_CAP);
    const code = EXIT_CODE.exec(ex.output);
    if (code && code[1] !== "0") return { checked: true, holds: false, detail: `the recorded run exited with code ${code[1]}` };
    if (FAIL_SHAPES.some((re) => re.test(tail))) return { checked: true, holds: false, detail: "the recorded output reports failures" };
    if (ZERO_SHAPES.some((re) => re.test(tail))) return { checked: true, holds: false, detail: "the recorded output shows that no tests ran" };
    if (PASS_SHAPES.some((re) => re.test(tail))) return { checked: true, holds: true, detail: "recorded run exited 0 and reports passing tests" };
    return { checked: false, holds: false, detail: "the recorded run exited 0 but its output shows no test summary" };
  }
  return { checked: false, holds: false, detail: "no recorded bash execution of this command" };
}
