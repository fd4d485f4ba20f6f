/**
 * ListenAddressError is an `--http-endpoint` / `--metrics-address` value
 * that is not a TCP address Go's net.Listen would take.
 */
export class ListenAddressError extends Error {
  override name = "ListenAddressError";
  readonly address: string;

  constructor(address: string, problem: string) {
    super(`invalid HTTP endpoint address "${address}": ${problem}; expected host:port or :port, e.g. ":8080" or "127.0.0.1:8080"`);
    this.address = address;
  }
}

/** HttpServerStartError: the HTTP endpoint could not listen (port taken, address not local). Upstream exits 1. */
export class HttpServerStartError extends Error {
  override name = "HttpServerStartError";
}
