/**
 * compactEtcd moves etcd's revision on (one write outside /registry) and
 * compacts everything before it, through etcd's JSON gateway: every
 * resourceVersion a client holds is then gone, and a watch resumed from one
 * answers 410 Gone. test/e2e/api-server-restart.test.ts and test/chaos do
 * the same; the bench has its own copy so it imports nothing from tests'
 * bodies.
 */
export async function compactEtcd(etcdUrl: string): Promise<number> {
  const put = await fetch(`${etcdUrl}/v3/kv/put`, { method: "POST", body: JSON.stringify({ key: btoa("/bench/bump"), value: btoa(String(Date.now())) }) });
  if (!put.ok) throw new Error(`etcd put failed: ${await put.text()}`);
  const revision = ((await put.json()) as { header: { revision: string } }).header.revision;
  const compaction = await fetch(`${etcdUrl}/v3/kv/compaction`, { method: "POST", body: JSON.stringify({ revision, physical: true }) });
  if (!compaction.ok) throw new Error(`etcd compaction failed: ${await compaction.text()}`);
  return Number(revision);
}
