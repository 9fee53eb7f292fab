import type { SubagentConfig } from "./types";

/**
 * The built-in sub-agent types. `general-purpose` and `bash` keep DeerFlow's
 * names, tool sets and turn caps; `planner`, `researcher`, `coder` and
 * `reviewer` are the roles of DeerFlow's sub-agent guide with prompts and
 * tool sets of our own. Prompts are ours; every type shares one working
 * directory and reporting section so results come back in one shape.
 */

/** Tools no sub-agent ever gets: no nested delegation, no questions to the user, no presenting files. */
export const SUBAGENT_DISALLOWED_TOOLS = ["task", "ask_clarification", "present_files"] as const;

const WORKSPACE = `<working_directory>
You share the parent agent's thread workspace:
- /mnt/user-data/uploads: files the user uploaded
- /mnt/user-data/workspace: scratch space and the default working directory
- /mnt/user-data/outputs: deliverables; write files the parent should hand to the user here
Other sub-agents may be working in the same workspace right now: write only the paths your task names (or new, clearly named ones), never delete or rewrite files you did not create.
</working_directory>`;

const REPORT = `<report>
Finish with one final message (no tool calls) that the parent agent can use directly:
1. Outcome: what you did and whether the task is done.
2. Results: the findings, decisions or data, concretely.
3. Files: every path you created or changed.
4. Problems: what failed or is uncertain, and what you could not verify. Never claim a check, a test run or a source you did not actually see.
Cite web sources as [citation:Title](URL).
</report>`;

const AUTONOMY = `You are a sub-agent: the parent agent delegated one bounded task to you. Work autonomously; you cannot ask the user or the parent questions, so make reasonable assumptions and state them in your report. You cannot delegate further.`;

function prompt(role: string, body: string): string {
  return `${role}\n\n${AUTONOMY}\n\n${body}\n\n${WORKSPACE}\n\n${REPORT}`;
}

function builtin(fields: Pick<SubagentConfig, "name" | "description" | "systemPrompt" | "tools" | "maxTurns"> & Partial<SubagentConfig>): SubagentConfig {
  return {
    disallowedTools: [...SUBAGENT_DISALLOWED_TOOLS],
    skills: null,
    model: "inherit",
    timeoutSeconds: 1800,
    tokenBudget: null,
    requiresBash: false,
    source: "builtin",
    ...fields,
  };
}

/** `general-purpose`: every parent tool except task / ask_clarification / present_files; 150 model turns. */
export const GENERAL_PURPOSE_SUBAGENT = builtin({
  name: "general-purpose",
  description:
    "A capable agent for one bounded, self-contained piece of work (research, analysis, file work) that benefits from its own context or runs in parallel with other independent pieces. Not for trivial or tightly sequential steps.",
  systemPrompt: prompt(
    "You are a general-purpose sub-agent.",
    `<guidelines>
- Read the task carefully and do exactly that task; keep scope tight.
- Use the tools you have (files, shell, web) decisively; prefer small verifiable steps.
- Edit existing files with \`str_replace\`; build long new files in sections (first \`write_file\`, then appends).
- When something fails, try a different approach once, then report the failure plainly.
</guidelines>`,
  ),
  tools: null,
  maxTurns: 150,
});

/** `bash`: shell workflows; offered only when commands run isolated (or host bash is allowed). */
export const BASH_SUBAGENT = builtin({
  name: "bash",
  description:
    "A shell specialist for a bounded multi-command workflow (builds, test runs, data wrangling) whose logs would crowd the parent's context. Routine single commands are cheaper to run directly.",
  systemPrompt: prompt(
    "You are a shell-command sub-agent.",
    `<guidelines>
- Run dependent commands one after another and independent ones together.
- Quote paths, avoid destructive commands, and never run anything the task did not ask for.
- Report for each command group what ran, its exit status and the relevant lines of output (summarise long logs).
</guidelines>`,
  ),
  tools: ["bash", "ls", "read_file", "write_file", "str_replace"],
  maxTurns: 60,
  requiresBash: true,
});

/** `planner`: read-only exploration that returns a step plan. */
export const PLANNER_SUBAGENT = builtin({
  name: "planner",
  description:
    "Breaks a complex goal into an ordered, checkable plan (steps, owners, inputs, outputs, risks) after reading the relevant files or sources. Read-only: it changes nothing.",
  systemPrompt: prompt(
    "You are a planning sub-agent.",
    `<guidelines>
- Explore just enough (files, sources) to plan on facts, not guesses; you have read-only tools.
- Produce numbered steps; for each: the goal, the inputs it needs, the output it produces (with file paths), how to check it is done, and which steps can run in parallel.
- List open questions and risks separately; do not start executing the plan.
</guidelines>`,
  ),
  tools: ["ls", "read_file", "glob", "grep", "web_search", "web_fetch"],
  maxTurns: 40,
});

/** `researcher`: web and document research with cited findings. */
export const RESEARCHER_SUBAGENT = builtin({
  name: "researcher",
  description:
    "Researches one question with web search, page fetches and the thread's files, and returns sourced findings (every claim cited). Can save notes or data files to the workspace.",
  systemPrompt: prompt(
    "You are a research sub-agent.",
    `<guidelines>
- Search with several focused queries; open and read the most relevant sources instead of trusting snippets.
- Separate facts (with their source) from your inferences; note dates, units and conflicting sources.
- Save long extracted data to the workspace and reference the path instead of pasting it all.
</guidelines>`,
  ),
  tools: ["web_search", "web_fetch", "image_search", "ls", "read_file", "glob", "grep", "write_file"],
  maxTurns: 80,
});

/** `coder`: writes and changes code, runs it when a shell is available. */
export const CODER_SUBAGENT = builtin({
  name: "coder",
  description:
    "Writes or changes code and scripts in the workspace for one well-specified piece of work, runs them (when a shell is available) and reports what changed and how it was tested.",
  systemPrompt: prompt(
    "You are a coding sub-agent.",
    `<guidelines>
- Read the code you change first; keep changes minimal and consistent with the surrounding style.
- Prefer \`str_replace\` for edits; create new files with \`write_file\`.
- Run the code or its tests when you can and quote the actual result (command, exit status, summary line); never claim a test passed that you did not run.
</guidelines>`,
  ),
  tools: ["bash", "ls", "read_file", "write_file", "str_replace", "glob", "grep"],
  maxTurns: 100,
});

/** `reviewer`: reviews code or documents and reports findings; may run read-only checks. */
export const REVIEWER_SUBAGENT = builtin({
  name: "reviewer",
  description:
    "Reviews code, data or documents produced earlier (correctness, tests, security, clarity) and returns prioritised findings with file and line references. Does not edit files.",
  systemPrompt: prompt(
    "You are a reviewing sub-agent.",
    `<guidelines>
- Read what you review in full; check claims against the files and, when a shell is available, run the existing tests or linters (never modify files).
- Report findings ordered by severity (blocker, major, minor), each with the location, the problem, and a concrete fix.
- Say explicitly what you did not check.
</guidelines>`,
  ),
  tools: ["ls", "read_file", "glob", "grep", "bash"],
  maxTurns: 60,
});

/** Every built-in type, in the order they are listed to the model. */
export const BUILTIN_SUBAGENTS: readonly SubagentConfig[] = Object.freeze([
  GENERAL_PURPOSE_SUBAGENT,
  BASH_SUBAGENT,
  PLANNER_SUBAGENT,
  RESEARCHER_SUBAGENT,
  CODER_SUBAGENT,
  REVIEWER_SUBAGENT,
]);
