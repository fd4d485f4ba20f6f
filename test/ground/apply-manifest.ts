/**
 * `kubectl apply` of a fresh object, for the few kinds the deploy manifests
 * hold: each object POSTed to its collection, its namespace as the manifest
 * says (the kind decides whether it has one).
 */
import type { AdminClient, KubeObject } from "./admin-client";

/** The collection of each kind: API prefix, plural, and whether it is namespaced. */
const collections: Readonly<Record<string, { readonly prefix: string; readonly plural: string; readonly namespaced: boolean }>> = {
  ServiceAccount: { prefix: "/api/v1", plural: "serviceaccounts", namespaced: true },
  ClusterRole: { prefix: "/apis/rbac.authorization.k8s.io/v1", plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { prefix: "/apis/rbac.authorization.k8s.io/v1", plural: "clusterrolebindings", namespaced: false },
  Role: { prefix: "/apis/rbac.authorization.k8s.io/v1", plural: "roles", namespaced: true },
  RoleBinding: { prefix: "/apis/rbac.authorization.k8s.io/v1", plural: "rolebindings", namespaced: true },
  Deployment: { prefix: "/apis/apps/v1", plural: "deployments", namespaced: true },
};

/** collectionPath is where an object of `kind` in `namespace` is created. */
export function collectionPath(kind: string, namespace: string | undefined): string {
  const collection = collections[kind];
  if (collection === undefined) throw new Error(`no collection known for kind ${kind}`);
  if (!collection.namespaced) return `${collection.prefix}/${collection.plural}`;
  return `${collection.prefix}/namespaces/${namespace ?? "default"}/${collection.plural}`;
}

/** ManifestObject is one document of a manifest, as parsed. */
export interface ManifestObject {
  readonly kind?: string;
  readonly metadata?: { readonly namespace?: string | undefined };
}

/** applyObjects creates each object, in order. */
export async function applyObjects(admin: AdminClient, objects: readonly ManifestObject[]): Promise<void> {
  for (const object of objects) {
    if (object.kind === undefined) throw new Error(`manifest object ${JSON.stringify(object.metadata)} has no kind`);
    await admin.create(collectionPath(object.kind, object.metadata?.namespace), object as KubeObject);
  }
}
