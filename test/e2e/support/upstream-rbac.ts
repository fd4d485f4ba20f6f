import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitForCondition } from "../../ground/managed-process";
import type { AdminClient, KubeObject } from "../../ground/admin-client";
import type { TestCluster } from "../../ground/test-cluster";

/** The RBAC operators deploy with the attacher: upstream's rbac.yaml, as this repository ships it. */
const rbacYamlPath = join(import.meta.dir, "../../../deploy/kubernetes/rbac.yaml");

/** Where each kind of rbac.yaml's objects is created. */
const collectionPaths: Readonly<Record<string, (namespace: string) => string>> = {
  ServiceAccount: (namespace) => `/api/v1/namespaces/${namespace}/serviceaccounts`,
  ClusterRole: () => "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  ClusterRoleBinding: () => "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
  Role: (namespace) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`,
  RoleBinding: (namespace) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
};

/** The service account deploy/kubernetes/rbac.yaml binds: `default/csi-attacher`. */
export const upstreamServiceAccount = { namespace: "default", name: "csi-attacher" } as const;

/**
 * applyUpstreamRbac creates every object of deploy/kubernetes/rbac.yaml as it is (a
 * cluster needs it once), then returns a kubeconfig that authenticates as
 * its service account with a fresh token: an attacher started with it has
 * exactly the rights a deployment following the README gives it, and no
 * Secret access (rbac.yaml leaves that rule commented out).
 */
export async function upstreamRbacKubeconfig(cluster: TestCluster, admin: AdminClient, dir: string): Promise<UpstreamRbacUser> {
  const documents = readFileSync(rbacYamlPath, "utf8")
    .split(/^---$/m)
    .map((text) => Bun.YAML.parse(text) as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && typeof object === "object" && typeof object.kind === "string");
  for (const object of documents) {
    const path = collectionPaths[object.kind ?? ""];
    if (path === undefined) throw new Error(`deploy/kubernetes/rbac.yaml has a ${object.kind} this helper cannot create`);
    await admin.create(path(object.metadata?.namespace ?? "default"), object);
  }
  const { namespace, name } = upstreamServiceAccount;
  const request = await admin.request<{ status: { token: string } }>("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 7200 },
  });
  const token = request.status.token;
  // RBAC learns of new bindings through its informers: wait until they apply.
  await waitForCondition(
    async () => {
      const res = await fetch(`${cluster.server}/apis/storage.k8s.io/v1/volumeattachments?limit=1`, { headers: { Authorization: `Bearer ${token}` }, tls: { ca: cluster.caPem } });
      await res.text();
      return res.ok;
    },
    { description: "the upstream RBAC binding to take effect", timeoutMs: 30_000 },
  );
  const path = join(dir, "upstream-rbac.kubeconfig");
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "e2e", cluster: { server: cluster.server, "certificate-authority-data": Buffer.from(cluster.caPem).toString("base64") } }],
      users: [{ name: name, user: { token } }],
      contexts: [{ name: "e2e", context: { cluster: "e2e", user: name } }],
      "current-context": "e2e",
    }),
    { mode: 0o600 },
  );
  return { kubeconfig: path, token };
}

/** UpstreamRbacUser is the service account of deploy/kubernetes/rbac.yaml, ready to use. */
export interface UpstreamRbacUser {
  /** A kubeconfig for the attacher's --kubeconfig. */
  readonly kubeconfig: string;
  /** Its bearer token. */
  readonly token: string;
}

/**
 * grantSecretRead lets the upstream service account read Secrets in one
 * namespace, as the optional rule in rbac.yaml would cluster-wide, and
 * waits until the authorizer applies it.
 */
export async function grantSecretRead(cluster: TestCluster, admin: AdminClient, user: UpstreamRbacUser, namespace: string): Promise<void> {
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "csi-attacher-secrets", namespace },
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
  });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "csi-attacher-secrets", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "csi-attacher-secrets" },
    subjects: [{ kind: "ServiceAccount", ...upstreamServiceAccount }],
  });
  // 404 instead of 403 for a Secret that does not exist: the grant is in force.
  await waitForCondition(
    async () => {
      const res = await fetch(`${cluster.server}/api/v1/namespaces/${namespace}/secrets/rbac-probe`, { headers: { Authorization: `Bearer ${user.token}` }, tls: { ca: cluster.caPem } });
      await res.text();
      return res.status === 404;
    },
    { description: `Secret read in ${namespace} to take effect`, timeoutMs: 30_000 },
  );
}
