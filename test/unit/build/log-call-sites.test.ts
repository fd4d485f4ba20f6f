import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Logger, type LogFormat } from "../../../src/log/logger";
import { BuildError } from "../../../scripts/build/errors";
import { findLogCalls, programFor, projectPath, withCallSites, type LogCall } from "../../../scripts/build/log-call-sites";
import * as asWritten from "./fixtures/logging-calls";

const root = resolve(import.meta.dir, "../../..");
const fixture = join(import.meta.dir, "fixtures/logging-calls.ts");

function capture(format: LogFormat): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger({ format, verbosity: 2, pid: 7, now: () => 0, localTimeIsUtc: true, sink: (line) => lines.push(line) }), lines };
}

function linesOf(logEveryForm: typeof asWritten.logEveryForm, format: LogFormat): string[] {
  const { log, lines } = capture(format);
  logEveryForm(log);
  return lines;
}

let text: string;
let calls: LogCall[];
let rewrittenText: string;
let rewritten: typeof asWritten;
let dir: string;

beforeAll(async () => {
  text = readFileSync(fixture, "utf8");
  calls = findLogCalls(programFor(root, projectPath(root, fixture)), root).get(fixture) ?? [];
  rewrittenText = withCallSites(text, calls, projectPath(root, fixture));
  // The copy lives elsewhere, so that a line still read from the stack would name another directory.
  dir = mkdtempSync(join(tmpdir(), "log-call-sites-"));
  writeFileSync(join(dir, "logging-calls.ts"), rewrittenText);
  rewritten = (await import(join(dir, "logging-calls.ts"))) as typeof asWritten;
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the build's log call sites", () => {
  it("finds every call of a logger method, through a variable, a chain or across lines", () => {
    expect(calls.map((call) => call.line)).toEqual([11, 12, 13, 13, 14, 16, 20, 21, 28, 29]);
  });

  it("gives each call the file and line that its stack names, so a built binary logs the lines the source does", () => {
    expect(linesOf(rewritten.logEveryForm, "text")).toEqual(linesOf(asWritten.logEveryForm, "text"));
    expect(linesOf(asWritten.logEveryForm, "text")).toHaveLength(9);
    // JSON's caller has the directory too: the copy's lines name the fixture's, which only the build's sites can say.
    const json = linesOf(rewritten.logEveryForm, "json");
    expect(json.map((line) => (JSON.parse(line) as { caller: string }).caller)).toEqual(linesOf(asWritten.logEveryForm, "json").map((line) => (JSON.parse(line) as { caller: string }).caller));
    expect((JSON.parse(json[0] ?? "") as { caller: string }).caller).toBe("fixtures/logging-calls.ts:11");
  });

  it("adds arguments only: every line keeps its number, and calls of other objects' info and error stay as written", () => {
    const before = text.split("\n");
    const after = rewrittenText.split("\n");
    expect(after).toHaveLength(before.length);
    const changed = after.flatMap((line, i) => (line === before[i] ? [] : [i + 1]));
    expect(changed).toEqual([11, 12, 13, 14, 16, 20, 25, 28, 29]);
    expect(after.filter((line) => line.includes("recorder."))).toEqual(before.filter((line) => line.includes("recorder.")));
    expect(rewritten.callLookalikes()).toEqual(asWritten.callLookalikes());
  });

  it("refuses a logger call whose arguments are spread, naming its file and line", () => {
    const spread = join(import.meta.dir, "fixtures/logging-spread.ts");
    // The checker's program takes most of a second: built once, its refusal asked twice.
    const program = programFor(root, projectPath(root, spread));
    expect(() => findLogCalls(program, root)).toThrow(BuildError);
    expect(() => findLogCalls(program, root)).toThrow(/logging-spread\.ts:5: a logger call with a spread argument/);
  });
});
