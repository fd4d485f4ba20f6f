import { AdminClient, createIfAbsent } from "./admin-client";
import { ensureComponents, type ComponentPaths } from "./components";
import { startMockCsiDriver, type MockCsiDriver } from "./mock-csi-driver";
import { startTestCluster, type TestCluster, type TestClusterOptions } from "./test-cluster";

/** The driver name and node the local ground registers. */
export const localDriverName = "mock.csi.test";
export const localNodeName = "node-1";

/** LocalGround is the test ground for a person: cluster, mock driver and the CSINode that joins them. */
export interface LocalGround {
  readonly cluster: TestCluster;
  readonly components: ComponentPaths;
  readonly driver: MockCsiDriver;
  readonly admin: AdminClient;
}

/**
 * startLocalGround builds (or reuses) the components, starts etcd,
 * kube-apiserver and Kubernetes' mock CSI driver, and registers the driver
 * on node-1, so that an attacher pointed at it has everything it needs.
 */
export async function startLocalGround(dir: string | undefined, clusterOptions: Omit<TestClusterOptions, "dir" | "components"> = {}): Promise<LocalGround> {
  const components = await ensureComponents();
  const cluster = await startTestCluster({ components, ...clusterOptions, ...(dir === undefined ? {} : { dir }) });
  const driver = await startMockCsiDriver({ binary: components.mockCsiDriver, dir: cluster.dir, name: localDriverName });
  const admin = new AdminClient(cluster);
  await createIfAbsent(admin, "/apis/storage.k8s.io/v1/csinodes", {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: { name: localNodeName },
    spec: { drivers: [{ name: localDriverName, nodeID: driver.nodeId }] },
  });
  return { cluster, components, driver, admin };
}

