import type { KubeClient } from "../kube/http-client";
import { leaseSpecFromRecord, recordFromLeaseSpec, type LeaderElectionRecord } from "./lease-record";

/** The Lease object as far as the lock reads and writes it; other fields are carried through untouched. */
interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [key: string]: unknown };
  spec?: unknown;
  [key: string]: unknown;
}

export interface LeaseLockOptions {
  /** Leader election's own client: no work-path rate limiter in front of it. */
  readonly client: KubeClient;
  /** The Lease's namespace (see resolveLeaseNamespace). */
  readonly namespace: string;
  /** The Lease's name (see leaderElectionLeaseName). */
  readonly name: string;
  /** Labels put on the Lease when we create or take it (--leader-election-labels). Default none. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** resolveLeaseLockOptions fills the defaults of every optional field. */
function resolveLeaseLockOptions(options: LeaseLockOptions): Required<LeaseLockOptions> {
  return { ...options, labels: options.labels ?? {} };
}

/**
 * LeaseLock is client-go's resourcelock.LeaseLock: one coordination.k8s.io/v1
 * Lease read with GET, created with POST, and written with PUT of the whole
 * object as last read. The PUT carries that read's resourceVersion, so two
 * candidates racing for an expired lease cannot both win: the second gets
 * 409 Conflict.
 */
export class LeaseLock {
  readonly namespace: string;
  readonly name: string;
  private readonly client: KubeClient;
  private readonly labels: Readonly<Record<string, string>>;
  /** The Lease as last read or written; undefined before the first get/create. */
  private lease: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    const resolved = resolveLeaseLockOptions(options);
    this.client = resolved.client;
    this.namespace = resolved.namespace;
    this.name = resolved.name;
    this.labels = resolved.labels;
  }

  /** describe names the lock in logs: `namespace/name`. */
  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** get reads the Lease; rejects with a KubeApiError (404 when it does not exist). */
  async get(signal?: AbortSignal): Promise<LeaderElectionRecord> {
    this.lease = await this.client.get<LeaseObject>(this.objectPath(), signal);
    return recordFromLeaseSpec(this.lease.spec);
  }

  /** create makes the Lease with `record` and our labels; rejects with 409 AlreadyExists if another candidate was first. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const metadata: NonNullable<LeaseObject["metadata"]> = { name: this.name, namespace: this.namespace };
    if (Object.keys(this.labels).length > 0) metadata.labels = { ...this.labels };
    const lease: LeaseObject = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata, spec: leaseSpecFromRecord(record) };
    this.lease = await this.client.post<LeaseObject>(this.collectionPath(), lease, signal);
  }

  /**
   * update writes `record` over the Lease as last read, adding our labels to
   * whatever labels it has (others' labels are left alone, as client-go's
   * mergeLabels does). Rejects with 409 Conflict if it changed meanwhile.
   */
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (this.lease === undefined) throw new Error(`lease ${this.describe()} not initialized, call get or create first`);
    const metadata = { ...this.lease.metadata };
    if (Object.keys(this.labels).length > 0) metadata.labels = { ...metadata.labels, ...this.labels };
    const lease: LeaseObject = { ...this.lease, metadata, spec: leaseSpecFromRecord(record) };
    this.lease = await this.client.put<LeaseObject>(this.objectPath(), lease, signal);
  }

  private collectionPath(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases`;
  }

  private objectPath(): string {
    return `${this.collectionPath()}/${encodeURIComponent(this.name)}`;
  }
}
