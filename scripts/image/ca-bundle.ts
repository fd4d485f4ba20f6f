import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * caBundle is /etc/ssl/certs/ca-certificates.crt as Debian's
 * update-ca-certificates writes it from the ca-certificates package's
 * Mozilla roots, which an image build cannot run (postinst scripts are not
 * run, and the base has no shell): every `mozilla/*.crt` in byte order of
 * name (the order postinst writes /etc/ca-certificates.conf in), each ending
 * in a newline. Checked on Debian 12: the result is byte for byte the start of
 * the host's bundle from the same package version (local CAs follow it there).
 *
 * `shareDir` is the package's usr/share/ca-certificates.
 */
export function caBundle(shareDir: string): string {
  const mozilla = join(shareDir, "mozilla");
  const names = readdirSync(mozilla)
    .filter((name) => name.endsWith(".crt"))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (names.length === 0) throw new Error(`no certificates in ${mozilla}`);
  return names
    .map((name) => {
      const pem = readFileSync(join(mozilla, name), "utf8");
      return pem.endsWith("\n") ? pem : `${pem}\n`;
    })
    .join("");
}
