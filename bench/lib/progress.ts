/**
 * One progress line on stderr while the benchmark runs: rewritten in place
 * on a terminal, throttled to one line every few seconds in a log (CI).
 */
const tty = process.stderr.isTTY === true;
const logEveryMs = 5_000;
let lastLogged = 0;
let lastText = "";

/** progress shows `text` as the current state; `force` prints it even when throttled. */
export function progress(text: string, force = false): void {
  const stamp = new Date().toISOString().slice(11, 19);
  const line = `[bench ${stamp}] ${text}`;
  if (tty) {
    process.stderr.write(`\r\x1b[2K${line.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    return;
  }
  const now = performance.now();
  if (!force && (text === lastText || now - lastLogged < logEveryMs)) return;
  lastLogged = now;
  lastText = text;
  process.stderr.write(`${line}\n`);
}

/** note prints a permanent line (a finished step), ending any in-place line first. */
export function note(text: string): void {
  const stamp = new Date().toISOString().slice(11, 19);
  process.stderr.write(`${tty ? "\r\x1b[2K" : ""}[bench ${stamp}] ${text}\n`);
}
