import type { AdminClient } from "../ground/admin-client";
import type { AttacherOptions } from "../ground/attacher-process";
import { AttacherSupervisor } from "./attacher-supervisor";
import type { AttacherEnd } from "./invariants";

/**
 * Attachers is what the faults act on: one supervised attacher, or several
 * replicas under leader election of which the Lease holder does the work.
 */
export interface Attachers {
  /** How many attachers run at once. */
  readonly size: number;
  /** Attacher processes started so far, over every replica. */
  readonly incarnations: number;
  /** How each ended process ended, for the report. */
  readonly exits: readonly string[];
  /** Each ended process (killed, or exited by design) and when it ended. */
  readonly ends: readonly AttacherEnd[];
  start(): Promise<void>;
  /** killActive ends the attacher doing the work (the only one, or the Lease holder) with SIGKILL and names it. */
  killActive(): Promise<string>;
  /** waitUntilWorking resolves once at least `incarnations` processes were started and one of the running ones works (leads, caches synced). */
  waitUntilWorking(incarnations: number, timeoutMs?: number): Promise<void>;
  /**
   * driverLost is called once the driver died and before it comes back; the
   * wait it returns resolves once every attacher runs a process that reached
   * the new driver (see AttacherSupervisor.lastLeftByDriverLoss) and one of
   * them works.
   */
  driverLost(): (timeoutMs?: number) => Promise<void>;
  stop(): Promise<void>;
}

/** singleAttacher is one attacher without leader election, restarted like a container. */
export function singleAttacher(options: Omit<AttacherOptions, "name">): Attachers {
  const supervisor = new AttacherSupervisor(options);
  return {
    size: 1,
    get incarnations() {
      return supervisor.incarnations;
    },
    get exits() {
      return supervisor.exits;
    },
    get ends() {
      return supervisor.ends;
    },
    start: () => supervisor.start(),
    async killActive() {
      const name = `attacher-${supervisor.incarnations}`;
      await supervisor.killHard();
      return name;
    },
    waitUntilWorking: (incarnations, timeoutMs) => supervisor.waitForNext(incarnations - 1, timeoutMs),
    driverLost() {
      const last = supervisor.lastLeftByDriverLoss();
      return (timeoutMs) => supervisor.waitForNext(last, timeoutMs);
    },
    stop: () => supervisor.stop(),
  };
}

/** Leader election timing short enough for a chaos run: a dead leader's Lease expires in 4 s. */
const leaderElectionArgs = ["--leader-election", "--leader-election-lease-duration=4s", "--leader-election-renew-deadline=2s", "--leader-election-retry-period=500ms"];

/** A replica's restart waits this long: past the 4 s Lease. */
const restartDelayMs = 6_000;

/**
 * replicatedAttachers runs `replicas` attachers with leader election, each
 * under its own hostname (its identity), sharing the driver and the Lease
 * `external-attacher-leader-<driver>` in `namespace`.
 */
export function replicatedAttachers(options: Omit<AttacherOptions, "name">, replicas: number, admin: AdminClient, namespace: string, leaseName: string): Attachers {
  const supervisors = Array.from({ length: replicas }, (_, i) => {
    const hostname = `chaos-replica-${i}`;
    return new AttacherSupervisor(
      { ...options, hostname, args: [...(options.args ?? []), ...leaderElectionArgs], env: { ...options.env, POD_NAMESPACE: namespace } },
      hostname,
      /"Attempting to acquire leader lease"/,
      // Longer than the Lease: a killed leader comes back (with the same identity) only after
      // the standby took over, as the kubelet's back-off would have it, so failover really happens.
      restartDelayMs,
    );
  });
  const holder = async (): Promise<string | undefined> => {
    try {
      const lease = await admin.get<{ spec?: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaseName}`);
      return lease.spec?.holderIdentity;
    } catch (e: unknown) {
      // No Lease yet, or the API server is away: nobody is known to lead.
      void e;
      return undefined;
    }
  };
  const total = () => supervisors.reduce((sum, supervisor) => sum + supervisor.incarnations, 0);
  return {
    size: replicas,
    get incarnations() {
      return total();
    },
    get exits() {
      return supervisors.flatMap((supervisor) => supervisor.exits);
    },
    get ends() {
      return supervisors.flatMap((supervisor) => supervisor.ends).sort((a, b) => a.atMs - b.atMs);
    },
    async start() {
      for (const supervisor of supervisors) await supervisor.start();
      await this.waitUntilWorking(replicas);
    },
    async killActive() {
      // With the API server away (a fault at the same moment) the Lease
      // cannot be read, and a leader that could not renew exits: wait for a
      // running replica that the Lease names.
      const deadline = performance.now() + 30_000;
      let leader = await holder();
      let supervisor = supervisors.find((candidate) => candidate.name === leader && candidate.current.process.running);
      while (supervisor === undefined && performance.now() < deadline) {
        await Bun.sleep(100);
        leader = await holder();
        supervisor = supervisors.find((candidate) => candidate.name === leader && candidate.current.process.running);
      }
      if (supervisor === undefined) throw new Error(`no running replica holds the Lease (holder: ${leader ?? "none"})`);
      const name = `${supervisor.name}-${supervisor.incarnations} (leader)`;
      await supervisor.killHard();
      return name;
    },
    async waitUntilWorking(incarnations, timeoutMs = 120_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const leaderName = await holder();
        const leading = supervisors.find((supervisor) => supervisor.name === leaderName);
        const working = leading !== undefined && leading.current.process.running && /"Caches synced"/.test(leading.current.log());
        if (total() >= incarnations && working && supervisors.every((supervisor) => supervisor.current.process.running)) return;
        if (performance.now() > deadline) throw new Error(`no replica led with synced caches within ${timeoutMs} ms (holder: ${leaderName ?? "none"})`);
        await Bun.sleep(100);
      }
    },
    driverLost() {
      const last = supervisors.map((supervisor) => supervisor.lastLeftByDriverLoss());
      return async (timeoutMs = 120_000) => {
        await Promise.all(supervisors.map((supervisor, i) => supervisor.waitForNext(last[i] ?? 0, timeoutMs)));
        await this.waitUntilWorking(0, timeoutMs);
      };
    },
    async stop() {
      for (const supervisor of supervisors) await supervisor.stop();
    },
  };
}
