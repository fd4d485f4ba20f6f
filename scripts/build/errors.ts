/**
 * BuildError is a failure of `bun run build` the operator can act on: its
 * message says what failed and what to do, because that message is all a
 * CI log shows.
 */
export class BuildError extends Error {
  override name = "BuildError";
}
