import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { parseAppConfigText } from "../../packages/harness/src/config";
import { helmForTests } from "./helm-binary";

/**
 * deploy/helm/deerflow rendered by a real helm (`helm lint`, `helm template`), every object checked
 * against the Kubernetes OpenAPI schemas (kubernetes-models' validate()), and the rendered
 * config.yaml parsed by the gateway's own config parser. No cluster here: nothing is applied.
 */
const CHART = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.."), "deploy/helm/deerflow");
const helm = helmForTests();

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
};

function template(sets: string[] = []): { status: number | null; objects: K8sObject[]; stderr: string } {
  const args = ["template", "rel", CHART, "--namespace", "agents", ...sets.flatMap((s) => ["--set", s])];
  const res = spawnSync(helm as string, args, { encoding: "utf8" });
  const objects = res.status === 0 ? parseAllDocuments(res.stdout).map((d) => d.toJS() as K8sObject).filter((o) => o && o.kind) : [];
  return { status: res.status, objects, stderr: res.stderr };
}

function validateAll(objects: K8sObject[]): void {
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    expect(Model, `no schema model for ${o.apiVersion} ${o.kind}`).toBeDefined();
    // throws with the failing path (e.g. .spec.template.spec.containers[0].ports[0].containerPort) when invalid
    new Model(o as never).validate();
  }
}

const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe.skipIf(!helm)("deploy/helm/deerflow", () => {
  it("passes helm lint", () => {
    const res = spawnSync(helm as string, ["lint", CHART, "--strict"], { encoding: "utf8" });
    expect(res.stdout + res.stderr).toContain("0 chart(s) failed");
    expect(res.status).toBe(0);
  });

  it("renders with the defaults into schema-valid objects: a non-root gateway probed on /health, in-cluster PostgreSQL and Redis, NetworkPolicies", () => {
    const { status, objects, stderr } = template();
    expect(stderr).toBe("");
    expect(status).toBe(0);
    validateAll(objects);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      "ConfigMap/rel-deerflow",
      "Deployment/rel-deerflow",
      "Deployment/rel-deerflow-redis",
      "NetworkPolicy/rel-deerflow",
      "NetworkPolicy/rel-deerflow-postgresql",
      "NetworkPolicy/rel-deerflow-redis",
      "PersistentVolumeClaim/rel-deerflow-data",
      "Secret/rel-deerflow",
      "Service/rel-deerflow",
      "Service/rel-deerflow-postgresql",
      "Service/rel-deerflow-redis",
      "StatefulSet/rel-deerflow-postgresql",
    ]);
    const gw = find(objects, "Deployment", "rel-deerflow") as unknown as { spec: { template: { spec: Record<string, any> } } };
    const pod = gw.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001 });
    const c = pod.containers[0];
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) expect(c[probe].httpGet).toEqual({ path: "/health", port: "http" });
    expect(c.envFrom).toEqual([{ secretRef: { name: "rel-deerflow" } }]);

    const secret = find(objects, "Secret", "rel-deerflow") as unknown as { stringData: Record<string, string> };
    expect(secret.stringData.DATABASE_URL).toMatch(/^postgres:\/\/deerflow:[A-Za-z0-9]{40}@rel-deerflow-postgresql:5432\/deerflow$/);
    expect(secret.stringData.DEER_FLOW_STREAM_BRIDGE_REDIS_URL).toMatch(/^redis:\/\/:[A-Za-z0-9]{40}@rel-deerflow-redis:6379\/0$/);
    expect(secret.stringData.DEER_FLOW_JWT_SECRET).toMatch(/^[A-Za-z0-9]{40}$/);

    // the gateway's NetworkPolicy lets it reach PostgreSQL and Redis, and theirs admit only the gateway
    const pgPolicy = find(objects, "NetworkPolicy", "rel-deerflow-postgresql") as unknown as { spec: { ingress: { from: { podSelector: { matchLabels: Record<string, string> } }[] }[]; egress: unknown[] } };
    expect(pgPolicy.spec.ingress[0].from[0].podSelector.matchLabels["app.kubernetes.io/component"]).toBe("gateway");
    expect(pgPolicy.spec.egress).toEqual([]);
  });

  it("renders a config.yaml the gateway parses, on PostgreSQL and the Redis bridge, with sign-in on", () => {
    const cm = find(template().objects, "ConfigMap", "rel-deerflow") as unknown as { data: Record<string, string> };
    const env = { DATABASE_URL: "postgres://u:p@h:5432/d", DEER_FLOW_STREAM_BRIDGE_REDIS_URL: "redis://:p@h:6379/0", DEER_FLOW_JWT_SECRET: "s".repeat(40), OPENAI_API_KEY: "sk" };
    const { config, unknownKeys } = parseAppConfigText(cm.data["config.yaml"], { file: "configmap:config.yaml", env });
    expect(unknownKeys ?? []).toEqual([]);
    const c = config as unknown as Record<string, Record<string, unknown>>;
    expect(c.database).toMatchObject({ backend: "postgres", postgres_url: env.DATABASE_URL });
    expect(c.stream_bridge).toMatchObject({ type: "redis", redis_url: env.DEER_FLOW_STREAM_BRIDGE_REDIS_URL });
    expect(c.auth).toMatchObject({ enabled: true, jwt_secret: env.DEER_FLOW_JWT_SECRET });
  });

  it("with external URLs and an ingress: no in-cluster databases, SSE-friendly annotations, the host allowed", () => {
    const { status, objects, stderr } = template([
      "postgresql.enabled=false",
      "redis.enabled=false",
      "externalDatabase.url=postgres://app:pw@db.internal:5432/deerflow",
      "externalRedis.url=redis://:pw@cache.internal:6379/0",
      "ingress.enabled=true",
      "ingress.hosts[0].host=agents.example.org",
      "replicaCount=3",
      "persistence.accessModes[0]=ReadWriteMany",
    ]);
    expect(stderr).toBe("");
    expect(status).toBe(0);
    validateAll(objects);
    expect(objects.some((o) => o.kind === "StatefulSet" || o.metadata.name.endsWith("-redis"))).toBe(false);
    const secret = find(objects, "Secret", "rel-deerflow") as unknown as { stringData: Record<string, string> };
    expect(secret.stringData.DATABASE_URL).toBe("postgres://app:pw@db.internal:5432/deerflow");
    expect(secret.stringData.DEER_FLOW_STREAM_BRIDGE_REDIS_URL).toBe("redis://:pw@cache.internal:6379/0");
    const ingress = find(objects, "Ingress", "rel-deerflow") as K8sObject;
    expect(ingress.metadata.annotations).toMatchObject({ "nginx.ingress.kubernetes.io/proxy-buffering": "off", "nginx.ingress.kubernetes.io/proxy-read-timeout": "3600" });
    const cm = find(objects, "ConfigMap", "rel-deerflow") as unknown as { data: Record<string, string> };
    expect((parse(cm.data["config.yaml"]) as { server: { allowed_hosts: string[] } }).server.allowed_hosts).toEqual(["agents.example.org"]);
    expect((find(objects, "Deployment", "rel-deerflow") as unknown as { spec: { replicas: number; strategy?: unknown } }).spec).toMatchObject({ replicas: 3 });
  });

  it("refuses several replicas on SQLite, naming what they need", () => {
    const res = template(["postgresql.enabled=false", "redis.enabled=false", "replicaCount=2"]);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("replicaCount > 1 needs PostgreSQL");
  });
});
