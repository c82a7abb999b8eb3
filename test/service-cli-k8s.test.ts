// deploy/k8s, offline (no cluster here): every manifest is valid against the Kubernetes API's
// JSON schemas (kubernetes-models), kustomization.yaml lists them, and the deployment keeps the
// spec's rules: pod name from the downward API, Redis, a ReadWriteMany volume at /shared
// (SERVICE_SHARED_FS_ROOT), a preStop `service-cli drain` within a grace period of 300 s and
// more, probes on /health, keys from a Secret.
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { PersistentVolumeClaim, Secret, Service } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";
import { REPO } from "./support/main-process";

const DIR = join(REPO, "deploy", "k8s");
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "v1/Secret": Secret,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
};

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; stringData?: Record<string, string> };
const files = readdirSync(DIR).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
const docs: Array<{ file: string; obj: Obj }> = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
    return { file, obj: d.toJS() as Obj };
  }),
);
const find = (kind: string, name: string): Obj => {
  const found = docs.find((d) => d.obj.kind === kind && d.obj.metadata.name === name)?.obj;
  if (!found) throw new Error(`no ${kind} ${name} in deploy/k8s`);
  return found;
};

const orchestrator = () => find("Deployment", "brain-stack-orchestrator");
const container = () => orchestrator().spec.template.spec.containers.find((c: { name: string }) => c.name === "orchestrator");
const envOf = (name: string) => container().env.find((e: { name: string }) => e.name === name);

describe("deploy/k8s manifests", () => {
  it("are valid Kubernetes objects (kubernetes-models' JSON schemas)", () => {
    expect(docs.length).toBeGreaterThanOrEqual(8);
    for (const { file, obj } of docs) {
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      if (!Model) throw new Error(`${file}: no schema for ${obj.apiVersion} ${obj.kind}`);
      try {
        new Model(obj).validate();
      } catch (err) {
        throw new Error(`${file} ${obj.kind}/${obj.metadata.name}: ${(err as Error).message}`);
      }
    }
  });

  it("are all listed in kustomization.yaml, except the Secret example", () => {
    const k = parseAllDocuments(readFileSync(join(DIR, "kustomization.yaml"), "utf8"))[0]!.toJS() as { kind: string; resources: string[]; namespace: string };
    expect(k.kind).toBe("Kustomization");
    expect([...k.resources].sort()).toEqual(files.filter((f) => f !== "secret.example.yaml").sort());
  });

  it.skipIf(!Bun.which("kubectl"))("build with kubectl's kustomize, offline, into valid objects in the kustomization's namespace", () => {
    const k = parseAllDocuments(readFileSync(join(DIR, "kustomization.yaml"), "utf8"))[0]!.toJS() as { namespace: string };
    const r = Bun.spawnSync(["kubectl", "kustomize", DIR], { stdout: "pipe", stderr: "pipe", env: { ...process.env, KUBECONFIG: "/dev/null" } });
    expect(r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
    const built = parseAllDocuments(r.stdout.toString()).map((d) => d.toJS() as Obj & { metadata: { namespace?: string } });
    const listed = docs.filter((d) => d.file !== "secret.example.yaml").map((d) => `${d.obj.kind}/${d.obj.metadata.name}`);
    expect(built.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(listed.sort());
    for (const obj of built) {
      expect(obj.metadata.namespace).toBe(k.namespace);
      new MODELS[`${obj.apiVersion}/${obj.kind}`]!(obj).validate();
    }
  });

  it("Services and the budget select their Deployment's pods", () => {
    for (const [svc, deploy] of [
      ["brain-stack-orchestrator", "brain-stack-orchestrator"],
      ["brain-stack-redis", "brain-stack-redis"],
    ] as const) {
      const labels = find("Deployment", deploy).spec.template.metadata.labels;
      expect(labels).toMatchObject(find("Service", svc).spec.selector);
      expect(labels).toMatchObject(find("Deployment", deploy).spec.selector.matchLabels);
    }
    expect(orchestrator().spec.template.metadata.labels).toMatchObject(find("PodDisruptionBudget", "brain-stack-orchestrator").spec.selector.matchLabels);
    expect(orchestrator().spec.template.metadata.labels).toMatchObject(
      find("NetworkPolicy", "brain-stack-redis").spec.ingress[0].from[0].podSelector.matchLabels,
    );
  });
});

describe("the orchestrator Deployment", () => {
  it("runs several pods of the orchestrator, each storing its own pod name (downward API)", () => {
    expect(orchestrator().spec.replicas).toBeGreaterThanOrEqual(2);
    expect(container().args).toEqual(["--only", "orchestrator"]);
    expect(envOf("SERVICE_POD_NAME").valueFrom).toEqual({ fieldRef: { fieldPath: "metadata.name" } });
    expect(envOf("SERVICE_HOST").value).toBe("0.0.0.0");
    expect(container().ports).toEqual([{ name: "http", containerPort: 8200 }]);
  });

  it("shares Redis: REDIS_URL names the Redis Service", () => {
    const redis = find("Service", "brain-stack-redis");
    expect(envOf("REDIS_URL").value).toBe(`redis://${redis.metadata.name}:${redis.spec.ports[0].port}`);
    expect(find("Deployment", "brain-stack-redis").spec.template.spec.containers[0].image).toStartWith("redis:");
  });

  it("mounts a ReadWriteMany volume at /shared, which SERVICE_SHARED_FS_ROOT names, and lays it out first", () => {
    expect(envOf("SERVICE_SHARED_FS_ROOT").value).toBe("/shared");
    const mount = container().volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/shared");
    const volume = orchestrator().spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
    const claim = find("PersistentVolumeClaim", volume.persistentVolumeClaim.claimName);
    expect(claim.spec.accessModes).toEqual(["ReadWriteMany"]);
    const init = orchestrator().spec.template.spec.initContainers[0];
    expect(init.command).toEqual(["service-cli", "init-shared-fs"]);
    expect(init.image).toBe(container().image);
    expect(init.volumeMounts).toContainEqual({ name: mount.name, mountPath: "/shared" });
  });

  it("drains before it stops: preStop runs service-cli drain --timeout 300 within a longer grace period", () => {
    expect(container().lifecycle.preStop.exec.command).toEqual(["service-cli", "drain", "--timeout", "300"]);
    expect(orchestrator().spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(300);
  });

  it("probes /health on the service port", () => {
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      expect(container()[probe].httpGet).toEqual({ path: "/health", port: "http" });
    }
  });

  it("takes its keys from the Secret the example defines", () => {
    const secret = find("Secret", "brain-stack-orchestrator");
    for (const key of ["SERVICE_API_KEYS", "MODEL_CLI_OAUTH_TOKEN", "GITHOST_TOKEN"]) {
      const ref = envOf(key).valueFrom.secretKeyRef;
      expect(ref.name).toBe(secret.metadata.name);
      expect(ref.key).toBe(key);
      expect(Object.keys(secret.stringData!)).toContain(key);
    }
    expect(envOf("SERVICE_API_KEYS").valueFrom.secretKeyRef.optional).toBeUndefined();
    // No key is written into the Deployment itself.
    for (const e of container().env) if (/KEY|TOKEN|SECRET/.test(e.name)) expect(e.value).toBeUndefined();
  });
});

describe("the KEDA ScaledObject (issue 17)", () => {
  const scaled = () => find("ScaledObject", "brain-stack-orchestrator");
  it("scales the orchestrator Deployment on the BullMQ queue in the shipped Redis, one pod per SERVICE_MAX_PARALLEL_JOBS jobs", () => {
    const s = scaled();
    expect(s.spec.scaleTargetRef.name).toBe(orchestrator().metadata.name);
    expect(s.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    const redis = find("Service", "brain-stack-redis");
    const k = parseAllDocuments(readFileSync(join(DIR, "kustomization.yaml"), "utf8"))[0]!.toJS() as { namespace: string };
    const prefix = envOf("REDIS_KEY_PREFIX")?.value ?? "service"; // the setting's default
    const lists = s.spec.triggers.map((t: { type: string; metadata: Record<string, string> }) => {
      expect(t.type).toBe("redis");
      expect(t.metadata.address).toBe(`${redis.metadata.name}.${k.namespace}.svc.cluster.local:${redis.spec.ports[0].port}`);
      expect(t.metadata.listLength).toBe(envOf("SERVICE_MAX_PARALLEL_JOBS").value);
      return t.metadata.listName;
    });
    expect(lists).toEqual([`${prefix}:bull:jobs:wait`, `${prefix}:bull:jobs:active`]);
  });
});
