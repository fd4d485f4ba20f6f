import { describe, expect, it } from "bun:test";
import { ListenAddressError } from "../../../src/http/errors";
import { parseListenAddress } from "../../../src/http/listen-address";

describe("parseListenAddress", () => {
  it("reads host:port, :port and [ipv6]:port as Go's net.SplitHostPort does", () => {
    expect(["127.0.0.1:8080", ":8080", "[::1]:9808", "[::]:0", "localhost:80", "0.0.0.0:65535"].map(parseListenAddress)).toEqual([
      { host: "127.0.0.1", port: 8080 },
      { host: undefined, port: 8080 },
      { host: "::1", port: 9808 },
      { host: "::", port: 0 },
      { host: "localhost", port: 80 },
      { host: "0.0.0.0", port: 65535 },
    ]);
  });

  it("refuses an address without a port, an unbracketed IPv6 host, or a port out of range, naming the value", () => {
    const problems = ["8080", "::1:8080", "[::1:8080", ":http", ":65536", "host:"].map((address) => {
      try {
        parseListenAddress(address);
        return "accepted";
      } catch (e: unknown) {
        return e instanceof ListenAddressError ? e.message : `unexpected ${String(e)}`;
      }
    });
    const hint = 'expected host:port or :port, e.g. ":8080" or "127.0.0.1:8080"';
    expect(problems).toEqual([
      `invalid HTTP endpoint address "8080": missing port; ${hint}`,
      `invalid HTTP endpoint address "::1:8080": too many colons in address; ${hint}`,
      `invalid HTTP endpoint address "[::1:8080": missing ']' in address; ${hint}`,
      `invalid HTTP endpoint address ":http": port "http" is not a number from 0 to 65535; ${hint}`,
      `invalid HTTP endpoint address ":65536": port "65536" is not a number from 0 to 65535; ${hint}`,
      `invalid HTTP endpoint address "host:": port "" is not a number from 0 to 65535; ${hint}`,
    ]);
  });
});
