import { ListenAddressError } from "./errors";

/** Where the HTTP endpoint listens: a host (undefined = every interface) and a TCP port. */
export interface ListenAddress {
  /** Host name or IP literal without brackets; undefined listens on every interface, IPv4 and IPv6. */
  readonly host: string | undefined;
  /** TCP port; 0 lets the kernel choose. */
  readonly port: number;
}

/**
 * parseListenAddress reads an address the way Go's net.SplitHostPort does
 * for `http.ListenAndServe`: `host:port`, `:port` (every interface) or
 * `[ipv6]:port`. Ports are numeric (Go's service names such as `:http`
 * are not looked up).
 */
export function parseListenAddress(address: string): ListenAddress {
  const colon = address.lastIndexOf(":");
  if (colon < 0) throw new ListenAddressError(address, "missing port");
  let host = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (host.startsWith("[")) {
    if (!host.endsWith("]")) throw new ListenAddressError(address, "missing ']' in address");
    host = host.slice(1, -1);
  } else if (host.includes(":")) {
    // Go: an IPv6 host must be bracketed, or the port cannot be told apart.
    throw new ListenAddressError(address, "too many colons in address");
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new ListenAddressError(address, `port "${portText}" is not a number from 0 to 65535`);
  }
  return { host: host === "" ? undefined : host, port: Number(portText) };
}
