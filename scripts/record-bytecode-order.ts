/**
 * record-bytecode-order runs the built binary through a cold start with
 * VolumeAttachments waiting (start-up, the first attaches, then their
 * detaches and shutdown) and saves the order its functions first ran in to
 * scripts/bytecode-order.txt, which `bun run build` hands to
 * `bun build --bytecode-order`. Bun then lays the bytecode out in that
 * order, so a start reads the pages it needs in sequence instead of
 * faulting them in from all over a 110 MB binary.
 *
 * Measured at its introduction (issue 13), 100 VAs waiting, page cache
 * dropped before each start as in a fresh container, two runs of A B
 * rounds on a shared, loaded machine: exec to the first VA attached, median
 * 759 against 979 ms (6 rounds) and 507 against 589 ms (8 rounds), better
 * in 11 of the 14 pairs; peak RSS 72-73 against 75-76 MiB. With a warm page
 * cache no difference in time showed (8 and 12 rounds; first attach median
 * 197 against 199 ms in the quieter one).
 *
 * The file names functions by hashes: after code changes a stale file still
 * builds (checked with an edited source), but the functions it no longer
 * names lose their place in the order, and with them part of the gain.
 * Record it again after large
 * changes (the test ground's Go components must be built):
 *
 *   bun run build && bun run scripts/record-bytecode-order.ts && bun run build
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createVas, deleteVas, prepareOwnPvs, startBenchGround } from "../bench/lib/bench-ground";
import { waitForCondition } from "../test/ground/managed-process";
import { paths } from "../test/ground/objects";

const binary = process.env["ATTACHER_OUTFILE"] ?? "dist/csi-attacher";
const orderFile = "scripts/bytecode-order.txt";
/** As many VAs as the bench's cold-start scenario has waiting. */
const waiting = 100;
/** How long each wait may take, checked every 100 ms. */
const twoMinutes = { timeoutMs: 120_000, intervalMs: 100 };

const ground = await startBenchGround("fake", 0, "");
try {
  await prepareOwnPvs(ground, waiting, { count: 0 });
  const names = await createVas(ground.admin, "order", waiting);
  const recorded = join(mkdtempSync(join(tmpdir(), "bytecode-order-")), "order.txt");
  const attacher = Bun.spawn([binary, `--kubeconfig=${ground.cluster.kubeconfigPath}`, `--csi-address=${ground.csiSocket}`, "--kube-api-qps=1000", "--kube-api-burst=2000", "-v=2"], {
    env: { ...process.env, BUN_BYTECODE_ORDER_OUT: recorded },
    stdout: "ignore",
    stderr: "ignore",
  });
  await waitForCondition(async () => (await ground.admin.list(paths.volumeAttachments)).items.every((va) => (va as { status?: { attached?: boolean } }).status?.attached === true), { description: "every waiting VA attached", ...twoMinutes });
  await deleteVas(ground.admin, names);
  await waitForCondition(async () => (await ground.admin.list(paths.volumeAttachments)).items.length === 0, { description: "every VA detached and gone", ...twoMinutes });
  attacher.kill("SIGTERM");
  const code = await attacher.exited;
  if (code !== 0) throw new Error(`${binary} exited with ${code}`);
  copyFileSync(recorded, orderFile);
  console.log(`recorded ${orderFile} from ${binary} (${waiting} VAs attached and detached)`);
} finally {
  await ground.stop();
}
