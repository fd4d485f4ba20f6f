/** Facts about the machine and the binaries, stamped on every report. */
import { readFileSync } from "node:fs";
import { cpus, hostname, release, totalmem } from "node:os";

/** cpuModel reads the first "model name" of /proc/cpuinfo. */
export function cpuModel(): string {
  const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
  return match?.[1]?.trim() ?? cpus()[0]?.model ?? "unknown";
}

/** hostFacts are the parts of MachineFacts that need no binary. */
export function hostFacts() {
  return {
    hostname: hostname(),
    cpuModel: cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: release(),
    bunVersion: Bun.version,
  };
}

/** commandOutput runs a command and returns its trimmed stdout+stderr ("" if it fails to start). */
export function commandOutput(cmd: readonly string[], cwd?: string): string {
  try {
    const out = Bun.spawnSync([...cmd], { stdout: "pipe", stderr: "pipe", ...(cwd === undefined ? {} : { cwd }) });
    return `${out.stdout.toString()}${out.stderr.toString()}`.trim();
  } catch (e: unknown) {
    return `(${cmd[0]} failed: ${e instanceof Error ? e.message : String(e)})`;
  }
}
