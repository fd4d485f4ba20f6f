import type { TestCluster } from "../../ground/test-cluster";

/**
 * hardDeleteFromEtcd removes an object's key straight from etcd, finalizers
 * and all. kube-apiserver's watch then sends DELETED with the object's last
 * state, exactly what a client sees when the apiserver's own DELETE loses
 * the race with a concurrent finalizer add (kubernetes/kubernetes#77988), a
 * race no request sequence can trigger on demand.
 *
 * @param key the storage key, e.g. `/registry/volumeattachments/<name>`.
 */
export async function hardDeleteFromEtcd(cluster: TestCluster, key: string): Promise<void> {
  const response = await fetch(`${cluster.etcdUrl}/v3/kv/deleterange`, { method: "POST", body: JSON.stringify({ key: btoa(key) }) });
  const answer = (await response.json()) as { deleted?: string };
  if (!response.ok || answer.deleted !== "1") throw new Error(`etcd did not delete ${key}: ${JSON.stringify(answer)}`);
}
