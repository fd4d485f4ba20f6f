/**
 * check-gen fails when gen/ is not what `buf generate` makes from proto/
 * today: generated code is committed, so a proto edit without `bun run gen`
 * (or a hand edit of gen/) must not land.
 */
import { $ } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const out = mkdtempSync(join(tmpdir(), "gen-check-"));
const diff = await (async () => {
  try {
    await $`buf generate --output ${out}`.quiet();
    return await $`diff -r ${join(out, "gen")} gen`.nothrow().quiet();
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
})();
if (diff.exitCode !== 0) {
  console.error(`gen/ is stale; run \`bun run gen\` and commit the result:\n${diff.stdout.toString()}`);
  process.exit(1);
}
console.log("gen/ matches proto/");
