import type { TestCluster } from "../ground/test-cluster";
import type { CsiMethodName, ScriptedAnswer } from "../ground/fake-csi-driver/control-protocol";
import type { FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import type { Attachers } from "./attachers";

/** What a fault may act on. */
export interface FaultContext {
  readonly cluster: TestCluster;
  readonly driver: FakeCsiDriver;
  readonly attachers: Attachers;
  /** How long a scripted burst may wait for the churn to bring calls. */
  readonly burstTimeoutMs: number;
}

/** Fault is one thing going wrong; `inject` returns once it is over and the system may recover. */
export interface Fault {
  readonly name: string;
  inject(context: FaultContext): Promise<string>;
}

const publishAndUnpublish: readonly CsiMethodName[] = ["ControllerPublishVolume", "ControllerUnpublishVolume"];

/** killApiserver ends kube-apiserver with SIGKILL: no graceful shutdown, watches cut mid-stream. */
function killApiserver(cluster: TestCluster): void {
  const [apiserver] = cluster.processes;
  if (apiserver === undefined) throw new Error("no kube-apiserver to kill");
  apiserver.killNow();
}

/** scriptBurst scripts `answers` for publish and unpublish and waits until the churn's calls used them up (or the time is over). */
async function scriptBurst(context: FaultContext, answers: readonly ScriptedAnswer[]): Promise<string> {
  const { control } = context.driver;
  for (const method of publishAndUnpublish) await control.script(method, answers);
  const deadline = performance.now() + context.burstTimeoutMs;
  let pending = await control.pendingScript();
  while (Object.keys(pending).length > 0 && performance.now() < deadline) {
    await Bun.sleep(100);
    pending = await control.pendingScript();
  }
  await control.clearScripts();
  const left = Object.values(pending).flat().reduce((sum, answer) => sum + (answer.remaining === "always" ? 0 : answer.remaining), 0);
  return left === 0 ? "all used" : `${left} answers unused when the burst ended`;
}

/** killAttacherDuring holds the next call of `method` in the driver, kills the attacher doing it (the leader, with replicas) with SIGKILL while it waits, and waits until attachers work again. */
async function killAttacherDuring(context: FaultContext, method: CsiMethodName): Promise<string> {
  const { control } = context.driver;
  await control.script(method, [{ hang: true }]);
  await control.waitForHung(method, 1, { timeoutMs: context.burstTimeoutMs });
  const before = context.attachers.incarnations;
  const killed = await context.attachers.killActive();
  // The held call died with its client's connection; nothing to release.
  await control.clearScripts();
  await context.attachers.waitUntilWorking(before + 1);
  return `${killed} killed with ${method} in flight; working again`;
}

const apiserverKilled: Fault = {
  name: "kube-apiserver killed (SIGKILL) and restarted",
  async inject({ cluster }) {
    killApiserver(cluster);
    await cluster.restartApiserver();
    return "restarted";
  },
};

const etcdCompacted: Fault = {
  name: "etcd compacted while kube-apiserver is down, so every watch resumes into 410 Gone",
  async inject({ cluster }) {
    killApiserver(cluster);
    let revision = 0;
    await cluster.restartApiserver(async () => {
      revision = await cluster.compactEtcd();
    });
    return `compacted at revision ${revision}`;
  },
};

const attacherKilledDuringPublish: Fault = { name: "attacher killed (SIGKILL) during ControllerPublishVolume", inject: (context) => killAttacherDuring(context, "ControllerPublishVolume") };
const attacherKilledDuringUnpublish: Fault = { name: "attacher killed (SIGKILL) during ControllerUnpublishVolume", inject: (context) => killAttacherDuring(context, "ControllerUnpublishVolume") };

const driverErrorBursts = (["DeadlineExceeded", "Unavailable", "Aborted", "ResourceExhausted"] as const).map(
  (code): Fault => ({ name: `driver answers ${code} in a burst`, inject: (context) => scriptBurst(context, [{ code, message: `chaos ${code}`, times: 6 }]) }),
);

const replyLost: Fault = {
  name: "driver does the work but answers DeadlineExceeded (reply lost)",
  inject: (context) => scriptBurst(context, [{ code: "DeadlineExceeded", apply: true, times: 4 }]),
};

const driverHangs: Fault = {
  name: "driver hangs past --timeout",
  async inject(context) {
    const outcome = await scriptBurst(context, [{ hang: true, times: 3 }]);
    // Over only once the attacher gave up on every held call (its --timeout), not when the next fault kills them.
    const deadline = performance.now() + context.burstTimeoutMs;
    while ((await context.driver.control.hung()).length > 0 && performance.now() < deadline) await Bun.sleep(100);
    const left = (await context.driver.control.hung()).length;
    return left === 0 ? `${outcome}; every held call given up by the attacher` : `${outcome}; ${left} calls still held`;
  },
};

const driverRestarted: Fault = {
  name: "driver restarted (the attacher exits by design and is restarted)",
  async inject({ driver, attachers }) {
    const before = attachers.incarnations;
    await driver.kill();
    // Every attacher that had reached the driver, a standby too, exits and is
    // restarted; one that had not yet (a replica that just came back after
    // losing its Lease) connects to the new driver and stays. Counting
    // restarts (`before + attachers.size`) waited for ever for that one
    // (long-mode seeds 204 and 207): which attacher must restart is noted
    // while no driver runs, so none can reach the old one after.
    const reconnected = attachers.driverLost();
    await driver.restart();
    await reconnected();
    return `driver pid ${driver.pid}; ${attachers.incarnations - before} attacher(s) restarted`;
  },
};

/** The faults, in the order one cycle injects them one at a time. */
export const faults: readonly Fault[] = [
  apiserverKilled,
  etcdCompacted,
  attacherKilledDuringPublish,
  attacherKilledDuringUnpublish,
  ...driverErrorBursts,
  replyLost,
  driverHangs,
  driverRestarted,
];

/**
 * The faults injected together after the cycles: each group at the same
 * moment. At most one fault of a group scripts the driver, because a
 * burst's end clears every script.
 */
export const faultsTogether: readonly (readonly Fault[])[] = [
  // The attacher dies mid-publish while the apiserver is down.
  [apiserverKilled, attacherKilledDuringPublish],
  // A relist into 410 Gone while the driver fails every call.
  [etcdCompacted, ...driverErrorBursts.filter((fault) => fault.name.includes("Unavailable"))],
  // Everything restarts at once.
  [apiserverKilled, driverRestarted],
  // The attacher dies mid-unpublish while the driver's replies are lost and the watches are cut.
  [etcdCompacted, attacherKilledDuringUnpublish],
  // Calls hang past --timeout while the apiserver is gone.
  [apiserverKilled, driverHangs],
];
