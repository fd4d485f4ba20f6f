// The fake CSI driver as a process of its own, so a test can kill it (the
// driver dying under the attacher) and a person can run it by hand:
//
//   bun run test/ground/fake-csi-driver/main.ts \
//     --socket /tmp/fake/csi.sock --control /tmp/fake/control.sock \
//     [--name fake.csi.test] [--config '{"controllerCapabilities":["PUBLISH_UNPUBLISH_VOLUME","LIST_VOLUMES"]}']
//     [--exit-with-stdin]
//
//   curl --unix-socket /tmp/fake/control.sock http://localhost/calls
//
// It runs directly under Bun; see grpc-server.ts for why no Node build is needed.
import { parseArgs } from "node:util";
import { resolveDriverConfig, type DriverConfig } from "./config";
import { startControlServer } from "./control-server";
import { DriverState } from "./driver-state";
import { startCsiServer } from "./grpc-server";
import { removeStaleSocket } from "./unix-socket";

const USAGE =
  "usage: bun run test/ground/fake-csi-driver/main.ts --socket PATH --control PATH [--name NAME] [--config JSON] [--exit-with-stdin]";

interface Flags {
  readonly socket: string;
  readonly control: string;
  readonly config: DriverConfig;
  readonly exitWithStdin: boolean;
}

function parseFlags(argv: string[]): Flags {
  const { values } = parseArgs({
    args: argv,
    options: {
      socket: { type: "string" },
      control: { type: "string" },
      name: { type: "string" },
      config: { type: "string" },
      "exit-with-stdin": { type: "boolean" },
    },
    strict: true,
  });
  if (values.socket === undefined || values.control === undefined) {
    throw new Error("--socket and --control are required");
  }
  const patch: unknown = values.config === undefined ? {} : JSON.parse(values.config);
  const config = resolveDriverConfig(patch);
  // --name wins over a name inside --config: it is the more specific flag.
  return {
    socket: values.socket,
    control: values.control,
    config: values.name === undefined ? config : resolveDriverConfig({ name: values.name }, config),
    exitWithStdin: values["exit-with-stdin"] === true,
  };
}

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (e: unknown) {
    console.error(`fake-csi-driver: ${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    process.exit(2);
  }

  const state = new DriverState(flags.config);
  await removeStaleSocket(flags.socket);
  await removeStaleSocket(flags.control);
  // CSI first: the control API answering /healthz is the launcher's signal
  // that the whole driver is ready.
  const csi = await startCsiServer(flags.socket, state);
  const control = startControlServer(flags.control, state);
  console.error(`fake-csi-driver: serving ${flags.config.name} on ${flags.socket}, control on ${flags.control}`);

  const shutDown = (signal: string): void => {
    console.error(`fake-csi-driver: ${signal}, shutting down`);
    csi.stop();
    control.stop();
    Promise.all([removeStaleSocket(flags.socket), removeStaleSocket(flags.control)]).then(
      () => process.exit(0),
      (e: unknown) => {
        console.error("fake-csi-driver: removing sockets:", e);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutDown("SIGTERM"));
  process.once("SIGINT", () => shutDown("SIGINT"));
  if (flags.exitWithStdin) {
    // The launcher holds our stdin open; when it dies, even by SIGKILL, the
    // pipe closes, so a crashed test run leaves no driver behind.
    process.stdin.once("end", () => shutDown("stdin closed"));
    process.stdin.resume();
  }
}

main().catch((e: unknown) => {
  console.error("fake-csi-driver: failed:", e);
  process.exit(1);
});
