import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { runtimeDefaultCapabilities, serviceAccountMountPath, translateAttacherContainer, type ImageConfig, type TestGround } from "../../ground/container-run-spec";
import { deploymentYamlPath, parseDeployment } from "../../ground/deployment-manifest";
import { ManifestError } from "../../ground/errors";

/** The image's config as `bun run image` writes it. */
const image: ImageConfig = { Entrypoint: ["/csi-attacher"], Cmd: null, Env: null, User: "65532:65532" };
const ground: TestGround = {
  emptyDirs: { "socket-dir": "/tmp/ground/socket-dir" },
  serviceAccountDir: "/tmp/ground/serviceaccount",
  apiServer: { host: "127.0.0.1", port: "6443" },
  hostPorts: { 8080: 18080 },
  podName: "csi-attacher-0",
  nodeName: "node-1",
  podIP: "127.0.0.1",
};

const shipped = readFileSync(deploymentYamlPath, "utf8");

/** edited is the shipped manifest with each `from` replaced; it throws if a `from` is not there, so no edit silently does nothing. */
function edited(...edits: readonly string[]): string {
  let text = shipped;
  for (let i = 0; i + 1 < edits.length; i += 2) {
    const [from, to] = [edits[i] ?? "", edits[i + 1] ?? ""];
    if (!text.includes(from)) throw new Error(`deployment.yaml no longer contains ${JSON.stringify(from)}: update this test's edit`);
    text = text.replace(from, to);
  }
  return text;
}

const translate = (text: string) => translateAttacherContainer(parseDeployment(text), image, ground);

/** failure is the ManifestError translating `text` throws. */
function failure(text: string): string {
  try {
    translate(text);
  } catch (e: unknown) {
    if (e instanceof ManifestError) return e.message;
    throw e;
  }
  throw new Error("the broken manifest translated without error");
}

const fixture = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: csi-attacher, namespace: storage }
spec:
  template:
    spec:
      serviceAccountName: csi-attacher
      terminationGracePeriodSeconds: 10
      containers:
        - name: csi-attacher
          image: bun-csi-attacher:latest
          args: ["--v=5", "--csi-address=$(ADDRESS)", "--leader-election", "--leader-election-namespace=$(NS)", "--http-endpoint=:8080"]
          env:
            - { name: SOCKET_DIR, value: /csi }
            - { name: ADDRESS, value: "$(SOCKET_DIR)/csi.sock" }
            - name: NS
              valueFrom: { fieldRef: { fieldPath: metadata.namespace } }
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { path: /readyz, port: http } }
          resources: { limits: { memory: 128Mi } }
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: { drop: [ALL] }
          volumeMounts: [{ name: socket-dir, mountPath: /csi/ }]
        - name: driver
          image: example.com/driver
          args: ["--endpoint=unix:///csi/csi.sock"]
          volumeMounts: [{ name: socket-dir, mountPath: /csi }]
      volumes: [{ name: socket-dir, emptyDir: {} }]
`;

describe("deployment.yaml -> the container a runtime runs", () => {
  it("takes args, env, user, security context, mounts, limit and probes from the manifest, moving only the listen port", () => {
    const spec = translate(fixture);
    expect({ ...spec, config: undefined }).toEqual({
      argv: ["/csi-attacher", "--v=5", "--csi-address=/csi/csi.sock", "--leader-election", "--leader-election-namespace=storage", "--http-endpoint=:18080"],
      env: ["KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=6443", "SOCKET_DIR=/csi", "ADDRESS=/csi/csi.sock", "NS=storage"],
      cwd: "/",
      user: { uid: 65532, gid: 65532 },
      readOnlyRoot: true,
      noNewPrivileges: true,
      capabilities: [],
      mounts: [
        { destination: "/csi", source: "/tmp/ground/socket-dir", readOnly: false },
        { destination: serviceAccountMountPath, source: "/tmp/ground/serviceaccount", readOnly: true },
      ],
      memoryLimitBytes: 128 * 1024 * 1024,
      gracePeriodMs: 10_000,
      csiSocketHostPath: "/tmp/ground/socket-dir/csi.sock",
      config: undefined,
      readinessProbe: { path: "/readyz", hostPort: 18080 },
      livenessProbe: undefined,
    });
  });

  it("runs the shipped manifest as nonroot with no capabilities, no privilege escalation, a read-only root and a memory limit", () => {
    const spec = translate(shipped);
    expect({ user: spec.user, capabilities: spec.capabilities, noNewPrivileges: spec.noNewPrivileges, readOnlyRoot: spec.readOnlyRoot, hasLimit: (spec.memoryLimitBytes ?? 0) > 0 }).toEqual({
      user: { uid: 65532, gid: 65532 },
      capabilities: [],
      noNewPrivileges: true,
      readOnlyRoot: true,
      hasLimit: true,
    });
  });

  it("refuses a socket path on no volume the driver could share", () => {
    expect(failure(edited("value: /var/lib/csi/sockets/pluginproxy/csi.sock", "value: /var/lib/csi/sockets/other/csi.sock"))).toMatch(
      /args: --csi-address \/var\/lib\/csi\/sockets\/other\/csi.sock is on no volume of the container/,
    );
  });

  it("refuses a socket the driver container does not serve", () => {
    expect(failure(edited("value: /var/lib/csi/sockets/pluginproxy/csi.sock", "value: /var/lib/csi/sockets/pluginproxy/attacher.sock"))).toMatch(
      /dials attacher.sock on volume socket-dir, but container csi-driver serves csi.sock there/,
    );
  });

  it("refuses args that use an env var nobody sets", () => {
    expect(failure(edited("- name: ADDRESS\n", "- name: CSI_ADDRESS\n"))).toMatch(/args\[1\]: "--csi-address=\$\(ADDRESS\)" uses \$\(ADDRESS\), but the container's env sets no ADDRESS/);
  });

  it("refuses a flag the attacher does not have, and a value it does not accept, in the attacher's words", () => {
    expect(failure(edited('- "--timeout=60s"', '- "--timeout=60s"\n            - "--no-such-flag"'))).toMatch(/args: the attacher refuses them: flag provided but not defined: --no-such-flag/);
    expect(failure(edited('- "--timeout=60s"', '- "--timeout=soon"'))).toMatch(/args: the attacher refuses them: invalid value "soon" for flag --timeout/);
  });

  it("refuses a probe on a port the attacher does not listen on", () => {
    expect(failure(edited('"--http-endpoint=:8080"', '"--http-endpoint=:9090"'))).toMatch(/readinessProbe: httpGet port 8080 is not where the attacher listens \(--http-endpoint port 9090\)/);
  });

  it("refuses root under runAsNonRoot, an unreadable memory limit, an undefined volume and env sources it cannot resolve", () => {
    expect(failure(edited("runAsUser: 65532", "runAsUser: 0"))).toMatch(/securityContext.runAsNonRoot: is true, but the container would run as uid 0/);
    // Whatever limit the manifest sets (it is tuned elsewhere), made unreadable.
    const limit = /limits:\n\s+memory: \S+/.exec(shipped)?.[0] ?? "deployment.yaml has no memory limit";
    expect(failure(edited(limit, limit.replace(/\S+$/, "lots")))).toMatch(/resources.limits.memory: "lots": not a quantity/);
    expect(failure(edited("- name: socket-dir\n          emptyDir: {}", "- name: other-dir\n          emptyDir: {}"))).toMatch(/mounts volume socket-dir, which spec.template.spec.volumes does not define/);
    expect(failure(edited("fieldPath: metadata.namespace", "fieldPath: status.phase"))).toMatch(/fieldRef status.phase is not one the test ground resolves/);
    expect(failure(edited("fieldRef:\n                  fieldPath: metadata.namespace", "secretKeyRef:\n                  name: s\n                  key: k"))).toMatch(/valueFrom secretKeyRef is not one the test ground resolves/);
  });

  it("gives the runtime's default capabilities when nothing is dropped, and privilege escalation unless it is forbidden", () => {
    const spec = translate(edited('            capabilities:\n              drop: ["ALL"]\n', "", "            allowPrivilegeEscalation: false\n", ""));
    expect({ capabilities: spec.capabilities, noNewPrivileges: spec.noNewPrivileges }).toEqual({ capabilities: [...runtimeDefaultCapabilities], noNewPrivileges: false });
  });

  it("refuses a document that is not a Deployment with a csi-attacher container", () => {
    expect(failure(edited("kind: Deployment", "kind: DaemonSet"))).toMatch(/deployment.yaml kind: Invalid type: Expected "Deployment"/);
    expect(failure(edited("- name: csi-attacher\n          image", "- name: attacher\n          image"))).toMatch(/has no container named csi-attacher/);
  });
});
