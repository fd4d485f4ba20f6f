import { DriverLoss } from "./csi/driver-loss";
import { runDoctor } from "./doctor/run-doctor";
import { connectToApiServer } from "./startup/api-server";
import { readCommandLine } from "./startup/command-line";
import { connectToDriver } from "./startup/csi-driver";
import { StartupFailure } from "./startup/errors";
import { startHttpEndpoint } from "./startup/http-endpoint";
import { runWhileLeading } from "./startup/leader-election";
import { startLogging } from "./startup/logging";
import { runAttacher } from "./startup/run-attacher";
import { stopOnSignals } from "./startup/shutdown-signals";

/** Where the command line's answers go: --help and --version to stdout, bad flags to stderr. */
const terminal = { out: (text: string) => process.stdout.write(text), err: (text: string) => process.stderr.write(text) };

/** exit is handed to the steps that must end the process from a callback: this file is the one place that exits. */
const exit = (code: number): never => process.exit(code);

/**
 * The attacher's entry point: the start-up sequence, each step in
 * src/startup/, and the one place that decides the process's exit code.
 */
async function main(argv: readonly string[]): Promise<number> {
  // A subcommand of its own, with its own flags: the doctor only reads.
  if (argv[0] === "doctor") return runDoctor(argv.slice(1), terminal);
  const command = readCommandLine({ argv, ...terminal });
  if ("exitCode" in command) return command.exitCode;
  const { config } = command;
  const log = startLogging({ config });
  const shutdown = stopOnSignals({ timeoutMs: config.timeoutMs, log, exit });
  // A lost driver stops the work at once; whether it was part of a shutdown decides the exit code.
  const driverLoss = new DriverLoss({ stopping: shutdown.signalled, stopWork: shutdown.stopWork });
  const signal = shutdown.work;
  try {
    const endpoint = await startHttpEndpoint({ config, log });
    const apiServer = await connectToApiServer({ config, endpoint });
    const driver = await connectToDriver({ config, log, endpoint, shutdown, driverLoss });
    // Undefined when stopped while waiting for the driver: no work ever ran.
    if (driver !== undefined) {
      const attacher = { config, log, apiServer, driver, endpoint, signal };
      if (!config.leaderElection) await runAttacher(attacher);
      // A lost lease means another replica may already be attaching: stop at once, as upstream does.
      else if ((await runWhileLeading(attacher)) === "lost") return 1;
      // The work has stopped: a driver that went away during the drain is judged now, not dropped with the exit.
      await driver.checkDriverNow();
    }
  } catch (e: unknown) {
    if (!(e instanceof StartupFailure)) throw e;
    log.error(e.message, { err: e.cause, ...e.fields });
    return 1;
  }
  shutdown.drained();
  log.info("Stopped");
  return driverLoss.exitCode();
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
