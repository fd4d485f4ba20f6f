/**
 * settle lets every pending promise callback run (one macrotask turn drains
 * the microtask queue), so a test can check what has resolved without
 * sleeping.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Tracked is a promise plus its outcome, readable synchronously. */
export interface Tracked<T> {
  readonly promise: Promise<T>;
  /** The resolved value, or `undefined` while pending. */
  value(): T | undefined;
}

/** track records when `promise` resolves, so tests can assert it is still pending. */
export function track<T>(promise: Promise<T>): Tracked<T> {
  let value: T | undefined;
  void promise.then((v) => {
    value = v;
  });
  return { promise, value: () => value };
}
