import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { $ } from "bun";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiError, KubeTransportError } from "../../src/kube/errors";
import { KubeClient } from "../../src/kube/http-client";
import { loadKubeConnection } from "../../src/kube/kubeconfig";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";

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
    const root = join(dir, "pod");
    const accountDir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(accountDir, { recursive: true });
    writeFileSync(join(accountDir, "token"), cluster.adminToken);
    writeFileSync(join(accountDir, "ca.crt"), cluster.caPem);
    writeFileSync(join(accountDir, "namespace"), "kube-system");
    const url = new URL(cluster.server);
    const saved = { host: process.env["KUBERNETES_SERVICE_HOST"], port: process.env["KUBERNETES_SERVICE_PORT"] };
    process.env["KUBERNETES_SERVICE_HOST"] = url.hostname;
    process.env["KUBERNETES_SERVICE_PORT"] = url.port;
    try {
      const connection = await loadKubeConnection({ inClusterPathPrefix: root });
      expect(connection.server).toBe(cluster.server);
      expect(await canListVolumeAttachments(new KubeClient({ connection }))).toBe(true);
    } finally {
      for (const [key, value] of [["KUBERNETES_SERVICE_HOST", saved.host], ["KUBERNETES_SERVICE_PORT", saved.port]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
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
