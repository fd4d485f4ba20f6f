/**
 * The binary's entry point. It first executes the binary again with our
 * runtime options (Bun's and JavaScriptCore's) when the environment lacks them
 * (util/reexec-with-runtime-options.ts), and only then loads the attacher
 * (main.ts) by a dynamic import: the bundle splits main.ts and everything it
 * imports into chunks of their own, so the image that is about to be
 * replaced evaluates this file and that one module, not the attacher's whole
 * module graph (the protobuf descriptors, the flag table, the clients),
 * which a bare binary on a laptop would otherwise pay twice at every start.
 */
import "./util/reexec-with-runtime-options";

await import("./main");
