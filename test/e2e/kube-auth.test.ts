import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { $ } from "bun";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiError, KubeTransportError } from "../../src/kube/errors";
import { KubeClient } from "../../src/kube/http-client";
import { loadKubeConnection } from "../../src/kube/kubeconfig";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";

/**
 * The attacher's own API client authenticates the ways real clusters ask it
 * to: client certificates, bearer tokens, exec credential plugins (EKS, GKE)
 * and the in-cluster service account, always verifying the server's CA.
 */
let cluster: TestCluster;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "e2e-kube-auth-"));
  // A CA of our own for client certificates, trusted by the apiserver.
  await $`openssl req -x509 -newkey rsa:2048 -nodes -keyout ${dir}/client-ca.key -out ${dir}/client-ca.crt -days 1 -subj /CN=e2e-client-ca`.quiet();
  await $`openssl req -newkey rsa:2048 -nodes -keyout ${dir}/client.key -out ${dir}/client.csr -subj /O=system:masters/CN=cert-user`.quiet();
  await $`openssl x509 -req -in ${dir}/client.csr -CA ${dir}/client-ca.crt -CAkey ${dir}/client-ca.key -CAcreateserial -out ${dir}/client.crt -days 1`.quiet();
  cluster = await startTestCluster({ extraApiserverArgs: [`--client-ca-file=${dir}/client-ca.crt`] });
});

afterAll(async () => {
  await cluster?.stop();
});

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

function writeKubeconfig(name: string, user: object): string {
  const path = join(dir, name);
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "e2e", cluster: { server: cluster.server, "certificate-authority-data": base64(cluster.caPem) } }],
    users: [{ name: "e2e-user", user }],
    contexts: [{ name: "e2e", context: { cluster: "e2e", user: "e2e-user" } }],
    "current-context": "e2e",
  };
  writeFileSync(path, JSON.stringify(config));
  return path;
}

async function canListVolumeAttachments(client: KubeClient): Promise<boolean> {
  const list = await client.get<{ kind?: string }>("/apis/storage.k8s.io/v1/volumeattachments?limit=1");
  return list.kind === "VolumeAttachmentList";
}

/** Writes the files a pod's service account volume holds, under `<dir>/<name>`; the root is client-node's in-cluster path prefix. */
function writePodServiceAccount(name: string, token: string): { root: string; tokenPath: string } {
  const root = join(dir, name);
  const accountDir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(accountDir, { recursive: true });
  const tokenPath = join(accountDir, "token");
  writeFileSync(tokenPath, token);
  writeFileSync(join(accountDir, "ca.crt"), cluster.caPem);
  writeFileSync(join(accountDir, "namespace"), "kube-system");
  return { root, tokenPath };
}

/** Runs `body` with KUBERNETES_SERVICE_HOST/PORT pointing at the test apiserver, as in a pod. */
async function inCluster(body: () => Promise<void>): Promise<void> {
  const url = new URL(cluster.server);
  const saved = { host: process.env["KUBERNETES_SERVICE_HOST"], port: process.env["KUBERNETES_SERVICE_PORT"] };
  process.env["KUBERNETES_SERVICE_HOST"] = url.hostname;
  process.env["KUBERNETES_SERVICE_PORT"] = url.port;
  try {
    await body();
  } finally {
    for (const [key, value] of [["KUBERNETES_SERVICE_HOST", saved.host], ["KUBERNETES_SERVICE_PORT", saved.port]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

describe("API client authentication", () => {
  it("authenticates with a client certificate from the kubeconfig", async () => {
    const kubeconfig = writeKubeconfig("cert.kubeconfig", {
      "client-certificate-data": base64(readFileSync(join(dir, "client.crt"), "utf8")),
      "client-key-data": base64(readFileSync(join(dir, "client.key"), "utf8")),
    });
    expect(await canListVolumeAttachments(new KubeClient({ connection: await loadKubeConnection({ kubeconfig }) }))).toBe(true);
  });

  it("authenticates with a token from an exec credential plugin, as EKS and GKE kubeconfigs do", async () => {
    const credential = JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: cluster.adminToken } });
    const kubeconfig = writeKubeconfig("exec.kubeconfig", {
      exec: { apiVersion: "client.authentication.k8s.io/v1", command: "sh", args: ["-c", `echo '${credential}'`], interactiveMode: "Never" },
    });
    expect(await canListVolumeAttachments(new KubeClient({ connection: await loadKubeConnection({ kubeconfig }) }))).toBe(true);
  });

  it("uses the in-cluster service account token, CA and KUBERNETES_SERVICE_HOST/PORT without a kubeconfig", async () => {
    const { root } = writePodServiceAccount("pod", cluster.adminToken);
    await inCluster(async () => {
      const connection = await loadKubeConnection({ inClusterPathPrefix: root });
      expect(connection.server).toBe(cluster.server);
      expect(await canListVolumeAttachments(new KubeClient({ connection }))).toBe(true);
    });
  });

  it("keeps working when the kubelet rotates the bound service-account token and the old one is revoked", async () => {
    const admin = new AdminClient(cluster);
    await admin.create("/api/v1/namespaces/default/serviceaccounts", { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "rotating" } });
    await admin.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "rotating-sa-admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "rotating", namespace: "default" }],
    });
    // A bound token dies with the object it is bound to: deleting its Secret revokes it.
    const boundToken = async (secretName: string): Promise<string> => {
      const secret: KubeObject = await admin.create("/api/v1/namespaces/default/secrets", { apiVersion: "v1", kind: "Secret", metadata: { name: secretName } });
      const request = await admin.request<{ status: { token: string } }>("POST", "/api/v1/namespaces/default/serviceaccounts/rotating/token", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: "v1", kind: "Secret", name: secretName, uid: secret.metadata?.uid } },
      });
      return request.status.token;
    };
    const tokenAccepted = async (token: string): Promise<boolean> => {
      const res = await fetch(`${cluster.server}/apis/storage.k8s.io/v1/volumeattachments?limit=1`, { headers: { Authorization: `Bearer ${token}` }, tls: { ca: cluster.caPem } });
      await res.text();
      return res.ok;
    };

    const oldToken = await boundToken("token-binding-old");
    const { root, tokenPath } = writePodServiceAccount("rotating-pod", oldToken);
    // RBAC learns of the new binding through its informers: wait until it applies.
    await waitForCondition(() => tokenAccepted(oldToken), { description: "the service account's binding to take effect", timeoutMs: 30_000 });

    await inCluster(async () => {
      const client = new KubeClient({ connection: await loadKubeConnection({ inClusterPathPrefix: root, tokenFileCheckMs: 0 }) });
      expect(await canListVolumeAttachments(client)).toBe(true);

      const newToken = await boundToken("token-binding-new");
      // The kubelet writes the new token beside the old one and swaps it in.
      writeFileSync(`${tokenPath}.new`, newToken);
      renameSync(`${tokenPath}.new`, tokenPath);
      await admin.delete("/api/v1/namespaces/default/secrets/token-binding-old");
      await waitForCondition(async () => !(await tokenAccepted(oldToken)), { description: "the old token to be revoked", timeoutMs: 30_000 });

      expect(await canListVolumeAttachments(client)).toBe(true);
    });
  });

  it("refuses a server whose certificate the configured CA did not sign", async () => {
    const kubeconfig = join(dir, "wrong-ca.kubeconfig");
    writeFileSync(
      kubeconfig,
      readFileSync(writeKubeconfig("tmp.kubeconfig", { token: cluster.adminToken }), "utf8").replace(base64(cluster.caPem), base64(readFileSync(join(dir, "client-ca.crt"), "utf8"))),
    );
    const client = new KubeClient({ connection: await loadKubeConnection({ kubeconfig }) });
    const error = await canListVolumeAttachments(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeTransportError);
    expect(String(error)).toMatch(/certificate|issuer|self.signed/i);
  });

  it("turns the server's Status into an error with its reason and exact message", async () => {
    const kubeconfig = writeKubeconfig("token.kubeconfig", { token: cluster.adminToken });
    const client = new KubeClient({ connection: await loadKubeConnection({ kubeconfig }) });
    const error = await client.get("/api/v1/persistentvolumes/pv-absent").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect({ status: (error as KubeApiError).status, reason: (error as KubeApiError).reason, message: (error as KubeApiError).message }).toEqual({
      status: 404,
      reason: "NotFound",
      message: 'persistentvolumes "pv-absent" not found',
    });
  });
});
