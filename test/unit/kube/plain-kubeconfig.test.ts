import { afterAll, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plainInCluster, plainKubeconfig } from "../../../src/kube/plain-kubeconfig";

const dir = mkdtempSync(join(tmpdir(), "plain-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const caPem = "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n";
const base64 = (text: string) => Buffer.from(text).toString("base64");

/** Writes a kubeconfig whose current context joins `cluster` and `user`, as YAML (JSON is YAML). */
function kubeconfig(name: string, cluster: object, user: object | null, extra: object = {}): string {
  const path = join(dir, name);
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    "current-context": "ctx",
    ...extra,
  };
  writeFileSync(path, JSON.stringify(config));
  return path;
}

describe("plainKubeconfig", () => {
  it("reads the server, the inline CA and a static token of the current context", () => {
    const path = kubeconfig("token.yaml", { server: "https://10.0.0.1:6443/", "certificate-authority-data": base64(caPem) }, { token: "abc" });
    expect(plainKubeconfig(path)).toEqual({ server: "https://10.0.0.1:6443/", ca: caPem, skipTlsVerify: false, token: "abc" });
  });

  it("reads YAML as kubectl writes it, with insecure-skip-tls-verify", () => {
    const path = join(dir, "written.yaml");
    writeFileSync(path, ["apiVersion: v1", "clusters:", "- cluster:", "    server: https://h:443", "    insecure-skip-tls-verify: true", "  name: c", "contexts:", "- context:", "    cluster: c", "    user: u", "  name: x", "current-context: x", "users:", "- name: u", "  user:", "    token: t", ""].join("\n"));
    expect(plainKubeconfig(path)).toEqual({ server: "https://h:443", skipTlsVerify: true, token: "t" });
  });

  it("reads client certificate files relative to the kubeconfig's directory, a file winning over inline data", () => {
    mkdirSync(join(dir, "certs"), { recursive: true });
    writeFileSync(join(dir, "certs/client.crt"), "CERT FILE");
    writeFileSync(join(dir, "certs/client.key"), "KEY FILE");
    writeFileSync(join(dir, "certs/ca.crt"), caPem);
    const path = kubeconfig(
      "certs.yaml",
      { server: "https://h", "certificate-authority": join(dir, "certs/ca.crt") },
      { "client-certificate": "certs/client.crt", "client-certificate-data": base64("CERT DATA"), "client-key": "certs/client.key" },
    );
    expect(plainKubeconfig(path)).toEqual({ server: "https://h", ca: caPem, cert: "CERT FILE", key: "KEY FILE", skipTlsVerify: false });
  });

  it("takes a user without fields for no credentials, and an empty token for none", () => {
    expect([plainKubeconfig(kubeconfig("nouser.yaml", { server: "https://h" }, null)), plainKubeconfig(kubeconfig("emptytoken.yaml", { server: "https://h" }, { token: "" }))]).toEqual([
      { server: "https://h", skipTlsVerify: false },
      { server: "https://h", skipTlsVerify: false },
    ]);
  });

  it("leaves to client-node every kubeconfig that needs a plugin or holds anything it does not read", () => {
    const cases: Record<string, string> = {
      exec: kubeconfig("exec.yaml", { server: "https://h" }, { exec: { command: "aws" } }),
      authProvider: kubeconfig("ap.yaml", { server: "https://h" }, { "auth-provider": { name: "gcp" } }),
      basic: kubeconfig("basic.yaml", { server: "https://h" }, { username: "a", password: "b" }),
      impersonation: kubeconfig("as.yaml", { server: "https://h" }, { token: "t", as: "someone" }),
      tokenFile: kubeconfig("tf.yaml", { server: "https://h" }, { "token-file": "/t" }),
      proxy: kubeconfig("proxy.yaml", { server: "https://h", "proxy-url": "socks5://p" }, { token: "t" }),
      noServer: kubeconfig("noserver.yaml", {}, { token: "t" }),
      missingCaFile: kubeconfig("noca.yaml", { server: "https://h", "certificate-authority": "missing.crt" }, { token: "t" }),
      noCurrentContext: kubeconfig("nocc.yaml", { server: "https://h" }, { token: "t" }, { "current-context": "" }),
      unknownContext: kubeconfig("unknownctx.yaml", { server: "https://h" }, { token: "t" }, { "current-context": "other" }),
      duplicateUser: kubeconfig("dup.yaml", { server: "https://h" }, { token: "t" }, { users: [{ name: "u", user: { token: "1" } }, { name: "u", user: { token: "2" } }] }),
      missingFile: join(dir, "does-not-exist.yaml"),
    };
    const brokenYaml = join(dir, "broken.yaml");
    writeFileSync(brokenYaml, "clusters: [\n  - {");
    cases["brokenYaml"] = brokenYaml;
    const answers = Object.fromEntries(Object.entries(cases).map(([name, path]) => [name, plainKubeconfig(path)]));
    expect(answers).toEqual(Object.fromEntries(Object.keys(cases).map((name) => [name, undefined])));
  });
});

describe("plainInCluster", () => {
  const root = join(dir, "pod");
  const accountDir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(accountDir, { recursive: true });
  writeFileSync(join(accountDir, "ca.crt"), caPem);

  it("builds the server from KUBERNETES_SERVICE_HOST/PORT and uses the service account's CA and token file, as client-node's loadFromCluster", () => {
    expect([
      plainInCluster({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }, root),
      plainInCluster({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, root)?.server,
      plainInCluster({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "8080" }, root)?.server,
    ]).toEqual([{ server: "https://10.96.0.1:443", ca: caPem, skipTlsVerify: false, tokenFile: join(accountDir, "token") }, "https://[fd00::1]:443", "http://10.96.0.1:8080"]);
  });

  it("leaves a pod without a readable CA to client-node, which reports it", () => {
    expect(plainInCluster({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }, join(dir, "no-such-pod"))).toBeUndefined();
  });
});
