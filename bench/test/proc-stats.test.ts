import { describe, expect, it } from "bun:test";
import { readCpuSeconds, readMemory } from "../lib/proc-stats";

describe("bench /proc readings", () => {
  it("reads this process's RSS, peak and private RSS in bytes, and its CPU seconds", () => {
    const memory = readMemory(process.pid);
    const cpu = readCpuSeconds(process.pid);
    expect({
      rssPlausible: memory !== undefined && memory.rssBytes > 1024 * 1024 && memory.hwmBytes >= memory.rssBytes && memory.anonBytes < memory.rssBytes,
      cpuPlausible: cpu !== undefined && cpu > 0 && cpu < process.uptime() * 64,
    }).toEqual({ rssPlausible: true, cpuPlausible: true });
  });

  it("answers undefined for a process that does not exist", () => {
    expect([readMemory(2 ** 22 + 1), readCpuSeconds(2 ** 22 + 1)]).toEqual([undefined, undefined]);
  });
});
