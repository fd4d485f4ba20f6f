import { closeSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { errorMessage } from "./error-message";

/**
 * The environment variable that moves the termination message file away
 * from Kubernetes' default `terminationMessagePath` (tests point it at a
 * temporary file; a pod with a custom terminationMessagePath sets it too).
 */
export const terminationLogPathEnv = "CSI_ATTACHER_TERMINATION_LOG";

/** terminationLogPath is where the termination message goes: the environment's choice, else /dev/termination-log. */
export function terminationLogPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env[terminationLogPathEnv] || "/dev/termination-log";
}

/**
 * writeTerminationMessage puts `message` in the file Kubernetes shows as
 * the container's last state (`kubectl describe pod`), replacing what was
 * there. It writes only into a file that already exists, as the kubelet's
 * mount does: outside Kubernetes nothing is created under /dev. Returns the
 * reason when the message could not be written, for the caller to log.
 */
export function writeTerminationMessage(path: string, message: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch (e: unknown) {
    return errorMessage(e);
  }
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${message}\n`, 0);
    return undefined;
  } catch (e: unknown) {
    return errorMessage(e);
  } finally {
    closeSync(fd);
  }
}
