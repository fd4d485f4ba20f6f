/**
 * deploy/kubernetes/rbac.yaml read beside deployment.yaml: the service
 * account the Deployment's pods run as must be the one rbac.yaml creates and
 * binds, cluster-wide to a ClusterRole of the file, and, with leader
 * election, in the Lease's namespace to a Role granting Leases. Renaming
 * one side and not the other fails here, naming both.
 *
 * Whether the rules are enough is for the end-to-end tests, which run the
 * attacher under exactly these objects (upstream-rbac.ts creates them as the
 * file has them) and expect nothing forbidden.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { resolveLeaseNamespace } from "../../src/leader/lease-namespace";
import type { ContainerRunSpec } from "./container-run-spec";
import { deploymentNamespace, type Deployment } from "./deployment-manifest";
import { ManifestError } from "./errors";

/** The RBAC operators deploy with the attacher. */
export const rbacYamlPath = join(import.meta.dir, "../../deploy/kubernetes/rbac.yaml");

const metadataSchema = v.looseObject({ name: v.string(), namespace: v.optional(v.string()) });
const ruleSchema = v.looseObject({ apiGroups: v.optional(v.array(v.string())), resources: v.optional(v.array(v.string())), verbs: v.array(v.string()) });
const subjectSchema = v.looseObject({ kind: v.string(), name: v.string(), namespace: v.optional(v.string()) });
const rbacObjectSchema = v.variant("kind", [
  v.looseObject({ kind: v.literal("ServiceAccount"), metadata: metadataSchema }),
  v.looseObject({ kind: v.literal("ClusterRole"), metadata: metadataSchema, rules: v.optional(v.array(ruleSchema)) }),
  v.looseObject({ kind: v.literal("Role"), metadata: metadataSchema, rules: v.optional(v.array(ruleSchema)) }),
  v.looseObject({
    kind: v.union([v.literal("ClusterRoleBinding"), v.literal("RoleBinding")]),
    metadata: metadataSchema,
    subjects: v.optional(v.array(subjectSchema)),
    roleRef: v.looseObject({ kind: v.string(), name: v.string() }),
  }),
]);

/** RbacObject is one document of rbac.yaml. */
export type RbacObject = v.InferOutput<typeof rbacObjectSchema>;
type Rule = v.InferOutput<typeof ruleSchema>;

/** parseRbacManifest reads every document of an rbac.yaml, refusing kinds it does not know. */
export function parseRbacManifest(text: string): RbacObject[] {
  return text
    .split(/^---$/m)
    .map((document) => Bun.YAML.parse(document) as unknown)
    .filter((document) => document !== null && typeof document === "object")
    .map((document, index) => {
      const result = v.safeParse(rbacObjectSchema, document);
      if (!result.success) throw new ManifestError(`rbac.yaml document ${index + 1} ${v.getDotPath(result.issues[0]) ?? ""}`, result.issues[0].message);
      return result.output;
    });
}

/** readRbacManifest parses deploy/kubernetes/rbac.yaml (or another file). */
export function readRbacManifest(path: string = rbacYamlPath): RbacObject[] {
  return parseRbacManifest(readFileSync(path, "utf8"));
}

/** ServiceAccountRef names a service account. */
export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/** namespaceOf is an object's namespace, "default" when the file leaves it out (as kubectl applies it). */
const namespaceOf = (object: { metadata: { namespace?: string | undefined } }) => object.metadata.namespace ?? "default";

function grantsLeases(rules: readonly Rule[]): boolean {
  const needed = ["get", "create", "update"];
  return rules.some(
    (rule) =>
      (rule.apiGroups ?? []).some((group) => group === "coordination.k8s.io" || group === "*") &&
      (rule.resources ?? []).some((resource) => resource === "leases" || resource === "*") &&
      needed.every((verb) => rule.verbs.includes(verb) || rule.verbs.includes("*")),
  );
}

/**
 * checkRbacCoversDeployment returns the service account the Deployment's
 * pods run as, after checking rbac.yaml creates and binds it (see the module
 * comment); `run` is the container as translated, for its flags and env.
 */
export function checkRbacCoversDeployment(deployment: Deployment, run: ContainerRunSpec, rbac: readonly RbacObject[]): ServiceAccountRef {
  const account = { namespace: deploymentNamespace(deployment), name: deployment.spec.template.spec.serviceAccountName ?? "default" };
  const accountName = `${account.namespace}/${account.name}`;
  if (!rbac.some((object) => object.kind === "ServiceAccount" && object.metadata.name === account.name && namespaceOf(object) === account.namespace)) {
    throw new ManifestError("rbac.yaml", `creates no ServiceAccount ${accountName}, which deployment.yaml's pods run as (spec.template.spec.serviceAccountName)`);
  }
  const bindsAccount = (object: RbacObject) =>
    (object.kind === "ClusterRoleBinding" || object.kind === "RoleBinding") &&
    (object.subjects ?? []).some((subject) => subject.kind === "ServiceAccount" && subject.name === account.name && (subject.namespace ?? "default") === account.namespace);

  const clusterBinding = rbac.find(
    (object) => object.kind === "ClusterRoleBinding" && bindsAccount(object) && rbac.some((role) => role.kind === "ClusterRole" && role.metadata.name === object.roleRef.name),
  );
  if (clusterBinding === undefined) throw new ManifestError("rbac.yaml", `has no ClusterRoleBinding of ServiceAccount ${accountName} to a ClusterRole it defines`);

  if (run.config.leaderElection) {
    const env = Object.fromEntries(run.env.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
    const leaseNamespace = resolveLeaseNamespace({ flag: run.config.leaderElectionNamespace, env, readFile: () => account.namespace });
    const granted = rbac.some(
      (binding) =>
        binding.kind === "RoleBinding" &&
        namespaceOf(binding) === leaseNamespace &&
        bindsAccount(binding) &&
        rbac.some(
          (role) =>
            (role.kind === "ClusterRole" || (role.kind === "Role" && namespaceOf(role) === leaseNamespace)) &&
            role.kind === binding.roleRef.kind &&
            role.metadata.name === binding.roleRef.name &&
            grantsLeases(role.rules ?? []),
        ),
    );
    if (!granted) {
      throw new ManifestError("rbac.yaml", `binds ServiceAccount ${accountName} to no Role granting get, create and update on Leases in ${leaseNamespace}, where --leader-election keeps its Lease`);
    }
  }
  return account;
}
