/**
 * How `bun run start` ends: a person presses Ctrl-C (or a supervisor sends
 * SIGTERM or SIGHUP), and that is the normal end of the script, not an
 * error. The ground comes down in order and the script exits 0.
 */
import { handOverSignals, stopAllManaged, type StopSignal } from "../test/ground/managed-process";

/**
 * stopSignal takes the stop signals over from the ground's default (which
 * exits 128 plus the signal's number, as an interrupted test should) and
 * resolves at the first one. Later ones change nothing: one Ctrl-C can
 * arrive twice, from the terminal and passed on by `bun run`, so a second
 * signal cannot mean "kill now"; every step of the stop has a deadline.
 */
export function stopSignal(): Promise<StopSignal> {
  const { promise, resolve } = Promise.withResolvers<StopSignal>();
  let received = false;
  handOverSignals((signal) => {
    if (received) return;
    received = true;
    console.log(`${signal}: taking the test ground down`);
    resolve(signal);
  });
  return promise;
}

/**
 * startOrStop waits for a start-up step unless a stop signal comes first;
 * then it stops whatever has started and exits 0, since nothing else is
 * waiting for the signal yet.
 */
export async function startOrStop<T>(step: Promise<T>, stop: Promise<StopSignal>): Promise<T> {
  // Once stopped, the step fails as its processes go away; that failure is expected, not news.
  step.catch((e: unknown) => e);
  const first = await Promise.race([step.then((value) => ({ value })), stop.then(() => "stopped" as const)]);
  if (first === "stopped") {
    await stopAllManaged();
    process.exit(0);
  }
  return first.value;
}
