import { FlagError } from "../cli/errors";
import { version } from "../cli/version";
import { CsiClient } from "../csi/csi-client";
import { createDriverConnection } from "../csi/driver-connection";
import { KubeClient } from "../kube/http-client";
import { loadKubeConnection } from "../kube/kubeconfig";
import { realClock } from "../util/clock";
import { errorMessage } from "../util/error-message";
import { takeSnapshot, type DoctorSnapshot } from "./cluster-snapshot";
import { parseDoctorFlags, doctorUsage, type DoctorFlags } from "./doctor-flags";
import { buildDoctorReport } from "./doctor-report";
import { renderJson, renderTable } from "./render-report";

/** Where the doctor writes: the report to `out`, failures to `err`. */
export interface DoctorStreams {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Exit status when the API server or the driver could not be read. */
const couldNotInspect = 3;

/**
 * runDoctor is `csi-attacher doctor`: it reads the driver's VAs and the
 * driver's view of them, prints the report, and returns the exit status
 * (0 healthy, 1 problems, 2 bad flags, 3 could not read).
 */
export async function runDoctor(argv: readonly string[], streams: DoctorStreams): Promise<number> {
  let flags: DoctorFlags;
  try {
    flags = parseDoctorFlags(argv);
  } catch (e: unknown) {
    if (!(e instanceof FlagError)) throw e;
    streams.err(`${e.message}\n`);
    return 2;
  }
  if (flags.showHelp) {
    streams.out(`${doctorUsage()}\n`);
    return 0;
  }

  let snapshot: DoctorSnapshot;
  try {
    const connection = await loadKubeConnection({ kubeconfig: flags.kubeconfig });
    const api = new KubeClient({ connection, userAgent: `csi-attacher-doctor/${version}` });
    // A one-shot reader has nothing to restart: a driver that goes away
    // fails the call in flight, and that failure is reported.
    const { transport } = createDriverConnection({ socketPath: flags.csiAddress, onConnectionLost: () => {} });
    snapshot = await takeSnapshot(api, new CsiClient(transport), flags.timeoutMs);
  } catch (e: unknown) {
    streams.err(`csi-attacher doctor: cannot read the cluster or the driver (--kubeconfig=${JSON.stringify(flags.kubeconfig)}, --csi-address=${flags.csiAddress}): ${errorMessage(e)}\n`);
    return couldNotInspect;
  }

  const report = buildDoctorReport(snapshot, { nowMs: realClock.now(), stuckAfterMs: flags.stuckAfterMs });
  streams.out(`${flags.output === "json" ? renderJson(report) : renderTable(report)}\n`);
  return report.problems === 0 ? 0 : 1;
}
