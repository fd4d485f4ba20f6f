/**
 * build compiles the attacher into one self-contained binary,
 * dist/csi-attacher, which is what the end-to-end tests and the image run.
 */
import { $ } from "bun";

const outfile = process.env["ATTACHER_OUTFILE"] ?? "dist/csi-attacher";
const started = performance.now();
await $`bun build --compile --minify --sourcemap=none src/main.ts --outfile ${outfile}`.quiet();
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`);
