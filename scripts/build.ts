/**
 * build compiles the attacher into one self-contained binary,
 * dist/csi-attacher, which is what the end-to-end tests and the image run.
 */
import { $ } from "bun";

const outfile = process.env["ATTACHER_OUTFILE"] ?? "dist/csi-attacher";
const started = performance.now();
// --sourcemap embeds the source map in the binary, so stack traces (and with
// them the file:line of each klog-style log line) name source files, not the
// minified bundle. The .map file written beside the binary is not needed.
await $`bun build --compile --minify --sourcemap=linked src/main.ts --outfile ${outfile}`.quiet();
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`);
