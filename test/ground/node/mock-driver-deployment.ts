/**
 * deploy/kubernetes/deployment.yaml as the node ground runs it: as written,
 * but for the placeholder csi-driver container, which becomes Kubernetes'
 * mock CSI driver from the node's image, serving on the socket the
 * attacher's ADDRESS names.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../admin-client";
import { nodeImages } from "./node-ground";

/** The manifests operators apply. */
export const deployDir = join(import.meta.dir, "../../../deploy/kubernetes");

/** The parts of the Deployment this file reads or changes. */
export interface DeploymentJson extends KubeObject {
  spec: { template: { spec: { containers: DeploymentContainer[] } } };
  status?: { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
}

interface DeploymentContainer {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

/** mockDriverDeployment reads deployment.yaml and swaps its csi-driver container for the mock driver named `driverName`. */
export function mockDriverDeployment(driverName: string): DeploymentJson {
  const deployment = Bun.YAML.parse(readFileSync(join(deployDir, "deployment.yaml"), "utf8")) as DeploymentJson;
  const containers = deployment.spec.template.spec.containers;
  const address = containers.find((container) => container.name === "csi-attacher")?.env?.find((variable) => variable.name === "ADDRESS")?.value;
  const driver = containers.find((container) => container.name === "csi-driver");
  if (address === undefined || driver === undefined) throw new Error("deployment.yaml no longer has the csi-driver container and the attacher's ADDRESS that the mock driver is swapped in by");
  driver.image = nodeImages.mockCsiDriver;
  // Imported, never pulled.
  driver.imagePullPolicy = "Never";
  driver.args = [`--endpoint=${address}`, `--name=${driverName}`];
  return deployment;
}
