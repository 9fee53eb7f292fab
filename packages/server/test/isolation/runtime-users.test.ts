/**
 * The caller's id reaches the harness: on a real runtime (lead agent, memory,
 * custom agents, skills) behind a gateway with sign-in on, what user A's runs
 * learn and what A creates is stored under `users/{A}` and shows in A's
 * model calls only; user B's runs on the same server see none of it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { RecordedLLMRequest, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { humanInput } from "../helpers/test-gateway";
import { authOn, initializeAdmin, registerUser } from "./signed-in";
import type { Session } from "./signed-in";

const PASSWORD = "Runtime-Users-42";
const FACT = "User deploys with Nomad, not Kubernetes";
const SOUL = "SOUL-OF-ALICE-7731: answer in haiku";
const SKILL_DESC = "ALICE-ONLY-SKILL-5519 drafts Alice's release notes";

const bodyText = (r: RecordedLLMRequest) => JSON.stringify(r.body ?? {});
const isUpdater = (r: RecordedLLMRequest) => bodyText(r).includes("long-term memory of an assistant");
const NOTHING = JSON.stringify({ user: {}, history: {}, newFacts: [] });
const UPDATE = JSON.stringify({
  user: {},
  history: {},
  newFacts: [{ content: FACT, category: "preference", confidence: 0.93, scope: "user", durability: "durable", authority: "descriptive" }],
});

describe("per-user data inside the harness (real runtime, lead agent, scripted provider, sign-in on)", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "runtime-users-"));
  const skillsDir = path.join(dataDir, "skills-root");
  let llm: ScriptedLLMServer;
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let A: Session;
  let B: Session;
  const ids = { a: "", b: "" };

  /** Chat-model requests (not the memory updater's) made while `fn` ran. */
  const chatDuring = async (fn: () => Promise<unknown>): Promise<string> => {
    const before = llm.requests.length;
    await fn();
    return llm.requests.slice(before).filter((r) => !isUpdater(r)).map(bodyText).join("\n");
  };
  const run = async (who: Session, text: string, assistantId?: string) => {
    const thread = (await who.json("POST", "/threads", {})).thread_id as string;
    const res = await who.json("POST", `/threads/${thread}/runs/wait`, { input: humanInput(text), ...(assistantId ? { assistant_id: assistantId } : {}) });
    return { thread, res };
  };

  beforeAll(async () => {
    fs.mkdirSync(path.join(skillsDir, "public"), { recursive: true });
    // the updater learns the fact only from the conversation that states it (A's)
    const update = (rec: RecordedLLMRequest) => ({ text: bodyText(rec).includes("I prefer it over Kubernetes") ? UPDATE : NOTHING });
    llm = await startScriptedLLMServer({ script: [(rec) => (isUpdater(rec) ? update(rec) : { text: "Understood." })], onExhausted: "repeat-last" });
    const { config } = appConfigFromText(
      [
        "models:",
        "  - name: basic",
        "    use: openai-compatible",
        "    model: scripted",
        `    base_url: ${llm.url}/v1`,
        "    api_key: k",
        "title:",
        "  enabled: false",
        "sandbox:",
        "  use: local",
        "memory:",
        "  debounce_seconds: 0.05",
        "agents_api:",
        "  enabled: true",
        "skills:",
        `  path: ${skillsDir}`,
        "",
      ].join("\n"),
    );
    runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
    const started = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined, auth: authOn({ registration_enabled: true }) });
    gateway = started.gateway;
    const api = `${started.url}/api`;
    A = await initializeAdmin(api, "alice@example.com", PASSWORD);
    B = await registerUser(api, "bob@example.com", PASSWORD);
    ids.a = (await A.json("GET", "/v1/auth/me")).id;
    ids.b = (await B.json("GET", "/v1/auth/me")).id;
  }, 30_000);

  afterAll(async () => {
    await gateway.close();
    await runtime.close();
    await llm.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("memory: A's run teaches users/{A}/memory.json; B's model calls never carry it, A's next ones do", async () => {
    await run(A, "We deploy with Nomad, I prefer it over Kubernetes");
    await runtime.extensions.memory!.flush();
    expect(fs.readFileSync(path.join(dataDir, "users", ids.a, "memory.json"), "utf8")).toContain(FACT);
    expect(fs.existsSync(path.join(dataDir, "users", ids.b, "memory.json"))).toBe(false);
    const bChat = await chatDuring(() => run(B, "How should I deploy the new service: Nomad or Kubernetes?"));
    expect(bChat).toContain("How should I deploy");
    expect(bChat).not.toContain(FACT);
    await runtime.extensions.memory!.flush();
    expect((await B.json("GET", "/memory")).facts.map((f: { content: string }) => f.content)).not.toContain(FACT);
    const aChat = await chatDuring(() => run(A, "Remind me how we deploy?"));
    expect(aChat).toContain(FACT);
  }, 30_000);

  it("custom agents: A's agent lives in users/{A}/agents and its soul reaches A's runs only", async () => {
    await A.json("POST", "/agents", { name: "helper", description: "Alice's helper", soul: SOUL }, 201);
    expect(fs.existsSync(path.join(dataDir, "users", ids.a, "agents", "helper"))).toBe(true);
    const aChat = await chatDuring(() => run(A, "Say hi", "helper"));
    expect(aChat).toContain("SOUL-OF-ALICE-7731");
    // B naming A's agent: no such agent for B, and A's soul never reaches the model
    const bChat = await chatDuring(async () => {
      const thread = (await B.json("POST", "/threads", {})).thread_id as string;
      await B.send("POST", `/threads/${thread}/runs/wait`, { input: humanInput("Say hi"), assistant_id: "helper" });
    });
    expect(bChat).not.toContain("SOUL-OF-ALICE-7731");
    expect(fs.existsSync(path.join(dataDir, "users", ids.b, "agents", "helper"))).toBe(false);
  }, 30_000);

  it("custom skills: A's installed skill is in users/{A}/skills and in A's prompt, not in B's", async () => {
    const thread = (await A.json("POST", "/threads", {})).thread_id as string;
    const archive = zipSync({ "alice-notes/SKILL.md": new TextEncoder().encode(`---\nname: alice-notes\ndescription: ${SKILL_DESC}\n---\n# Notes\n`) });
    expect((await A.upload(`/threads/${thread}/uploads`, { "alice-notes.skill": archive })).status).toBe(200);
    await A.json("POST", "/skills/install", { thread_id: thread, path: "/mnt/user-data/uploads/alice-notes.skill" });
    expect(fs.existsSync(path.join(dataDir, "users", ids.a, "skills", "custom", "alice-notes", "SKILL.md"))).toBe(true);
    expect(await chatDuring(() => run(A, "Draft notes"))).toContain("ALICE-ONLY-SKILL-5519");
    expect(await chatDuring(() => run(B, "Draft notes"))).not.toContain("ALICE-ONLY-SKILL-5519");
  }, 30_000);
});
