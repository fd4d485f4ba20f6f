/**
 * logCallSitePlugin is the bundler plugin that compiles each of the entry's
 * own files with its logger calls given their sites (log-call-sites.ts).
 * The checker's program is built once, before bundling, over the entry and
 * everything it imports.
 */
import type { BunPlugin } from "bun";
import { findLogCalls, programFor, projectPath, withCallSites } from "./log-call-sites";

export function logCallSitePlugin(root: string, entry: string): BunPlugin {
  const calls = findLogCalls(programFor(root, entry), root);
  return {
    name: "log-call-sites",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const fileCalls = calls.get(args.path);
        if (fileCalls === undefined) return undefined;
        const text = await Bun.file(args.path).text();
        return { contents: withCallSites(text, fileCalls, projectPath(root, args.path)), loader: "ts" };
      });
    },
  };
}
