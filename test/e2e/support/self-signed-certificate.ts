import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** selfSignedLoopbackCertificate makes a throw-away serving certificate for 127.0.0.1 with openssl. */
export function selfSignedLoopbackCertificate(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "corrupting-proxy-"));
  try {
    const run = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      { stderr: "pipe", stdout: "ignore" },
    );
    if (run.exitCode !== 0) throw new Error(`openssl failed: ${run.stderr.toString()}`);
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
