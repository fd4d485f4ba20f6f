/**
 * The ways the floor programs can reach kube-apiserver, each with the
 * words a report says it in: the bench's `--floor-api` names one, and
 * passes it to the floor programs as FLOOR_API_STACK (absent for the
 * default). The floor takes ours' own stack by default, so that it never
 * keeps a costlier one than ours (issue 36, tenth session).
 */
export const floorApiStacks = {
  own: "our HTTP/2 client (one TLS connection, requests and the watch as its streams, as ours)",
  fetch: "fetch (HTTP/1.1, a connection per request in flight)",
  http2: "node:http2 (one TLS session, requests and the watch as its streams)",
} as const;

export type FloorApiStack = keyof typeof floorApiStacks;

export const defaultFloorApiStack: FloorApiStack = "own";

export function isFloorApiStack(name: string): name is FloorApiStack {
  return Object.hasOwn(floorApiStacks, name);
}

/** floorApiStackFromEnv is the stack FLOOR_API_STACK names, the default when it names none. */
export function floorApiStackFromEnv(): FloorApiStack {
  const named = process.env["FLOOR_API_STACK"] ?? "";
  return isFloorApiStack(named) ? named : defaultFloorApiStack;
}
