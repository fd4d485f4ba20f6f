/**
 * deploy/kubernetes/deployment.yaml, read as the API server would take it:
 * parsed (Bun.YAML), checked against the part of the Deployment schema the
 * test ground can run, and nothing else. What the file says is what the
 * tests run; no value of it is copied into the tests.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { ManifestError } from "./errors";

/** The example Deployment operators apply. */
export const deploymentYamlPath = join(import.meta.dir, "../../deploy/kubernetes/deployment.yaml");

/** The container of the Deployment that runs the attacher. */
export const attacherContainerName = "csi-attacher";

const fieldRefSchema = v.object({ fieldPath: v.string(), apiVersion: v.optional(v.string()) });
const envVarSchema = v.object({
  name: v.string(),
  value: v.optional(v.string()),
  // Any other source (secretKeyRef, configMapKeyRef, resourceFieldRef) is kept to be refused by name.
  valueFrom: v.optional(v.looseObject({ fieldRef: v.optional(fieldRefSchema) })),
});
const portSchema = v.union([v.number(), v.string()]);
const probeSchema = v.looseObject({ httpGet: v.optional(v.object({ path: v.optional(v.string()), port: portSchema, scheme: v.optional(v.string()) })) });
const securityContextSchema = v.looseObject({
  runAsNonRoot: v.optional(v.boolean()),
  runAsUser: v.optional(v.number()),
  runAsGroup: v.optional(v.number()),
  allowPrivilegeEscalation: v.optional(v.boolean()),
  readOnlyRootFilesystem: v.optional(v.boolean()),
  privileged: v.optional(v.boolean()),
  capabilities: v.optional(v.object({ add: v.optional(v.array(v.string())), drop: v.optional(v.array(v.string())) })),
});
const containerSchema = v.looseObject({
  name: v.string(),
  image: v.string(),
  command: v.optional(v.array(v.string())),
  args: v.optional(v.array(v.string())),
  env: v.optional(v.array(envVarSchema)),
  ports: v.optional(v.array(v.looseObject({ name: v.optional(v.string()), containerPort: v.number() }))),
  volumeMounts: v.optional(v.array(v.object({ name: v.string(), mountPath: v.string(), readOnly: v.optional(v.boolean()), subPath: v.optional(v.string()) }))),
  securityContext: v.optional(securityContextSchema),
  resources: v.optional(v.looseObject({ limits: v.optional(v.record(v.string(), v.union([v.string(), v.number()]))) })),
  readinessProbe: v.optional(probeSchema),
  livenessProbe: v.optional(probeSchema),
});
const volumeSchema = v.looseObject({ name: v.string(), emptyDir: v.optional(v.looseObject({})) });
const podSpecSchema = v.looseObject({
  serviceAccountName: v.optional(v.string()),
  automountServiceAccountToken: v.optional(v.boolean()),
  hostNetwork: v.optional(v.boolean()),
  terminationGracePeriodSeconds: v.optional(v.number()),
  securityContext: v.optional(v.looseObject({ runAsUser: v.optional(v.number()), runAsGroup: v.optional(v.number()), runAsNonRoot: v.optional(v.boolean()) })),
  containers: v.array(containerSchema),
  volumes: v.optional(v.array(volumeSchema)),
});
const deploymentSchema = v.looseObject({
  apiVersion: v.literal("apps/v1"),
  kind: v.literal("Deployment"),
  metadata: v.looseObject({ name: v.string(), namespace: v.optional(v.string()) }),
  spec: v.looseObject({ template: v.looseObject({ spec: podSpecSchema }) }),
});

export type Deployment = v.InferOutput<typeof deploymentSchema>;
export type ContainerSpec = v.InferOutput<typeof containerSchema>;
export type EnvVar = v.InferOutput<typeof envVarSchema>;
export type Probe = v.InferOutput<typeof probeSchema>;

/** parseDeployment reads a Deployment manifest's text, or throws a ManifestError naming the field that does not fit. */
export function parseDeployment(text: string): Deployment {
  let document: unknown;
  try {
    document = Bun.YAML.parse(text);
  } catch (e: unknown) {
    throw new ManifestError("deployment.yaml", `is not YAML: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const result = v.safeParse(deploymentSchema, document);
  if (!result.success) {
    const issue = result.issues[0];
    throw new ManifestError(`deployment.yaml ${v.getDotPath(issue) ?? "(document)"}`, issue.message);
  }
  return result.output;
}

/** readDeployment parses deploy/kubernetes/deployment.yaml (or another file, for a test of a broken one). */
export function readDeployment(path: string = deploymentYamlPath): Deployment {
  return parseDeployment(readFileSync(path, "utf8"));
}

/** attacherContainer is the csi-attacher container of the Deployment's pod template. */
export function attacherContainer(deployment: Deployment): ContainerSpec {
  const container = deployment.spec.template.spec.containers.find((candidate) => candidate.name === attacherContainerName);
  if (container === undefined) throw new ManifestError("spec.template.spec.containers", `has no container named ${attacherContainerName}`);
  return container;
}

/** deploymentNamespace is where the Deployment's pods run: metadata.namespace, or "default" as kubectl applies it. */
export function deploymentNamespace(deployment: Deployment): string {
  return deployment.metadata.namespace ?? "default";
}
