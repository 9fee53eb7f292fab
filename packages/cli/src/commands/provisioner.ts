import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { loadDotEnvFiles, readEnv, resolveConfigPath, substituteEnvVars } from "@deerflow-ts/harness/config";
import { ConfigError } from "@deerflow-ts/harness/errors";
import { parseSandboxConfig } from "@deerflow-ts/harness/sandbox";
import type { SandboxConfig } from "@deerflow-ts/harness/sandbox";
import { DEFAULT_DOCKER_IMAGE } from "@deerflow-ts/harness/sandbox/docker";
import { DockerBackend, KubernetesBackend, loadKubernetesClient, startProvisioner } from "@deerflow-ts/server/provisioner";
import type { ProvisionerBackend } from "@deerflow-ts/server/provisioner";
import { COMMON_HELP, commonOptions, parseCommand, UsageError } from "../common";
import type { Terminal } from "../io";

/** Help of `deerflow provisioner`. */
export const PROVISIONER_HELP = `Usage: deerflow provisioner [options]

Start a sandbox provisioner speaking DeerFlow's contract: servers whose
config.yaml sets sandbox.provisioner_url to its URL (and
sandbox.provisioner_api_key to its key) create their sandboxes here. The
management API (/api/sandboxes) requires X-API-Key; each sandbox's command
API requires that sandbox's own token. Ctrl-C stops the service; sandboxes
keep running (their servers delete them). See docs/provisioner.md.

Options:
  --backend NAME     docker (default: containers on this host's Docker daemon)
                     or kubernetes (a Pod + Service + NetworkPolicy per sandbox)
  --host HOST        interface to bind (default 127.0.0.1)
  --port N           port (default 8002)
  --public-url URL   the URL servers reach this service at, used in every
                     sandbox_url (default http://HOST:PORT)
  --image REF        sandbox image (default: $SANDBOX_IMAGE, else sandbox.image,
                     else ${DEFAULT_DOCKER_IMAGE}); any image with /bin/sh
  --skills-dir PATH  directory mounted read-only at /mnt/skills (docker: a host
                     path; kubernetes: a node path)
  --namespace NS     kubernetes namespace (default deer-flow; DeerFlow's K8S_NAMESPACE)
  --kubeconfig PATH  kubeconfig (default: $KUBECONFIG_PATH, $KUBECONFIG, ~/.kube/config,
                     else the in-cluster service account)
  --idle-timeout S   delete a sandbox no request reached for S seconds (its server
                     crashed or forgot it); 0 never (default: sandbox.idle_timeout,
                     else 600)

Environment:
  PROVISIONER_API_KEY       required, at least 16 characters
  DEER_FLOW_PROVISIONER_TOKEN_SECRET
                            keeps sandbox tokens valid across restarts (else
                            servers re-request their sandboxes after a restart)

The sandbox: section of config.yaml (if one is found) supplies limits,
run_as_uid, environment, network and container_prefix.
${COMMON_HELP}`;

/** The `sandbox:` section of the config file, if one is found (no model or other section is needed here). */
function readSandboxSection(configPath: string | undefined, cwd: string, env: NodeJS.ProcessEnv): SandboxConfig {
  let file: string;
  try {
    file = resolveConfigPath({ path: configPath, cwd, env });
  } catch {
    if (configPath) throw new ConfigError(`Config file not found: ${configPath}`, { code: "config_not_found" });
    return parseSandboxConfig({});
  }
  if (!existsSync(file)) return parseSandboxConfig({});
  loadDotEnvFiles([path.join(path.dirname(file), ".env")], env);
  const doc = (parseYaml(readFileSync(file, "utf8")) ?? {}) as Record<string, unknown>;
  const { value } = substituteEnvVars(doc.sandbox ?? {}, env, "empty");
  return parseSandboxConfig(value);
}

/** `deerflow provisioner`: runs until SIGINT/SIGTERM (returns null while serving). */
export async function provisionerCommand(argv: string[], term: Terminal): Promise<number | null> {
  const { values } = parseCommand("provisioner", argv, {
    backend: { type: "string" },
    host: { type: "string" },
    port: { type: "string" },
    "public-url": { type: "string" },
    image: { type: "string" },
    "skills-dir": { type: "string" },
    namespace: { type: "string" },
    kubeconfig: { type: "string" },
    "idle-timeout": { type: "string" },
  });
  if (values.help) {
    term.line(PROVISIONER_HELP);
    return 0;
  }
  const env = process.env;
  const common = commonOptions(values);
  const backendName = values.backend ?? "docker";
  if (backendName !== "docker" && backendName !== "kubernetes") throw new UsageError(`--backend must be docker or kubernetes, got '${backendName}'`, "provisioner");
  const port = values.port !== undefined ? Number(values.port) : 8002;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, got '${values.port}'`, "provisioner");
  const config = readSandboxSection(common.configPath, common.cwd, env);
  const idleTimeout = values["idle-timeout"] !== undefined ? Number(values["idle-timeout"]) : config.idle_timeout;
  if (!Number.isFinite(idleTimeout) || idleTimeout < 0) throw new UsageError(`--idle-timeout must be a number of seconds (0 = never), got '${values["idle-timeout"]}'`, "provisioner");
  const image = values.image ?? readEnv("SANDBOX_IMAGE", env) ?? (config as { image?: string | null }).image ?? DEFAULT_DOCKER_IMAGE;
  const skillsDir = values["skills-dir"] ? path.resolve(common.cwd, values["skills-dir"]) : undefined;

  let backend: ProvisionerBackend;
  if (backendName === "docker") {
    const prefix = (config as { container_prefix?: string | null }).container_prefix;
    backend = new DockerBackend({
      config,
      image,
      dataDir: path.join(common.dataDir, "provisioner"),
      skillsDir,
      // The Docker tier's default prefix would collide with its own containers on a shared daemon.
      containerPrefix: prefix && prefix !== "deer-flow-sandbox" ? prefix : undefined,
    });
  } else {
    // client-node is an optional peer dependency, loaded only for this backend (the error says what to install)
    const kc = new (await loadKubernetesClient()).KubeConfig();
    const kubeconfig = values.kubeconfig ?? readEnv("KUBECONFIG_PATH", env);
    if (kubeconfig) kc.loadFromFile(path.resolve(common.cwd, kubeconfig));
    else kc.loadFromDefault();
    backend = new KubernetesBackend({
      kubeConfig: kc,
      namespace: values.namespace ?? "deer-flow",
      image,
      imagePullPolicy: "IfNotPresent",
      config,
      skillsHostPath: skillsDir,
      serviceType: "ClusterIP",
    });
  }
  const running = await startProvisioner({
    backend,
    apiKey: readEnv("PROVISIONER_API_KEY", env) ?? "",
    tokenSecret: readEnv("DEER_FLOW_PROVISIONER_TOKEN_SECRET", env),
    host: values.host ?? "127.0.0.1",
    port,
    publicUrl: values["public-url"],
    maxCommandTimeoutMs: config.bash_command_timeout * 1000,
    maxOutputBytes: config.max_output_bytes,
    environment: config.environment,
    idleTimeoutSeconds: idleTimeout,
    log: (l) => term.line(`[provisioner] ${l}`),
  });
  term.line(`DeerFlow provisioner (${backend.kind} backend, image ${image}) listening on ${running.url}`);
  if (!values["public-url"] && (values.host === "0.0.0.0" || values.host === "::")) {
    term.line(`Note: sandbox_url values name ${running.url}; pass --public-url with the address servers reach this host at.`);
  }
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return null;
}
