import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { translateAttacherContainer, type TestGround } from "../../ground/container-run-spec";
import { deploymentYamlPath, parseDeployment } from "../../ground/deployment-manifest";
import { ManifestError } from "../../ground/errors";
import { checkRbacCoversDeployment, parseRbacManifest, rbacYamlPath } from "../../ground/rbac-manifest";

const ground: TestGround = {
  emptyDirs: { "socket-dir": "/tmp/ground/socket-dir" },
  serviceAccountDir: "/tmp/ground/serviceaccount",
  apiServer: { host: "127.0.0.1", port: "6443" },
  hostPorts: { 8080: 18080 },
  podName: "csi-attacher-0",
  nodeName: "node-1",
  podIP: "127.0.0.1",
};
const shippedDeployment = readFileSync(deploymentYamlPath, "utf8");
const shippedRbac = readFileSync(rbacYamlPath, "utf8");

/** replaced is `text` with each `from` replaced everywhere; it throws if a `from` is not there, so no edit silently does nothing. */
function replaced(text: string, ...edits: readonly string[]): string {
  for (let i = 0; i + 1 < edits.length; i += 2) {
    const [from, to] = [edits[i] ?? "", edits[i + 1] ?? ""];
    if (!text.includes(from)) throw new Error(`the manifest no longer contains ${JSON.stringify(from)}: update this test's edit`);
    text = text.replaceAll(from, to);
  }
  return text;
}

function check(deploymentText: string, rbacText: string) {
  const deployment = parseDeployment(deploymentText);
  return checkRbacCoversDeployment(deployment, translateAttacherContainer(deployment, { Entrypoint: ["/csi-attacher"], User: "65532:65532" }, ground), parseRbacManifest(rbacText));
}

function failure(deploymentText: string, rbacText: string): string {
  try {
    check(deploymentText, rbacText);
  } catch (e: unknown) {
    if (e instanceof ManifestError) return e.message;
    throw e;
  }
  throw new Error("the broken manifests passed the check");
}

describe("rbac.yaml beside deployment.yaml", () => {
  it("creates and binds the service account the Deployment runs as, with Leases where leader election keeps them", () => {
    expect(check(shippedDeployment, shippedRbac)).toEqual({ namespace: "default", name: "csi-attacher" });
  });

  it("refuses a Deployment running as an account rbac.yaml does not create", () => {
    expect(failure(replaced(shippedDeployment, "serviceAccountName: csi-attacher", "serviceAccountName: attacher"), shippedRbac)).toMatch(/rbac.yaml: creates no ServiceAccount default\/attacher/);
    expect(failure(replaced(shippedDeployment, "namespace: default", "namespace: storage"), shippedRbac)).toMatch(/creates no ServiceAccount storage\/csi-attacher/);
  });

  it("refuses a ClusterRoleBinding of another account, or of a ClusterRole the file does not define", () => {
    const [head, clusterBinding, ...rest] = shippedRbac.split(/(?=^kind: ClusterRoleBinding$)/m);
    const [binding = "", after = ""] = (clusterBinding ?? "").split(/(?=^---$)/m);
    const rbac = (edit: string) => [head, edit, after, ...rest].join("");
    expect(failure(shippedDeployment, rbac(replaced(binding, "name: csi-attacher\n", "name: someone-else\n")))).toMatch(/has no ClusterRoleBinding of ServiceAccount default\/csi-attacher to a ClusterRole it defines/);
    expect(failure(shippedDeployment, rbac(replaced(binding, "name: external-attacher-runner", "name: missing-runner")))).toMatch(/has no ClusterRoleBinding/);
  });

  it("refuses Lease rights in another namespace, or without update", () => {
    const [before, role = ""] = shippedRbac.split(/(?=^kind: Role$)/m);
    const [roleDocument = "", rest = ""] = role.split(/(?=^---$)/m);
    const rbac = (edit: string) => [before, edit, rest].join("");
    expect(failure(shippedDeployment, rbac(replaced(roleDocument, "namespace: default", "namespace: kube-system")))).toMatch(
      /binds ServiceAccount default\/csi-attacher to no Role granting get, create and update on Leases in default/,
    );
    expect(failure(shippedDeployment, rbac(replaced(roleDocument, ', "update"', "")))).toMatch(/to no Role granting get, create and update on Leases/);
  });

  it("asks for no Lease rights without leader election", () => {
    const withoutElection = replaced(shippedDeployment, '            - "--leader-election"\n', "");
    const withoutRole = shippedRbac.split(/(?=^kind: Role$)/m)[0] ?? "";
    expect(check(withoutElection, withoutRole)).toEqual({ namespace: "default", name: "csi-attacher" });
  });
});
