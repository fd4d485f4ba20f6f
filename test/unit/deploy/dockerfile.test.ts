import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../../package.json" with { type: "json" };
import { targetFor } from "../../../scripts/build/build-targets";

const dockerfile = readFileSync(join(import.meta.dir, "../../../deploy/Dockerfile"), "utf8");

/** The image's Dockerfile, checked where no container engine runs. */
describe("deploy/Dockerfile", () => {
  it("builds with Bun's official image at the Bun version package.json pins, on the builder's own platform", () => {
    expect(/^FROM --platform=\$BUILDPLATFORM oven\/bun:(\S+) AS build$/m.exec(dockerfile)?.[1]).toBe(packageJson.devDependencies.bun);
  });

  it("compiles for buildx's TARGETARCH, which names a build target for each platform docs/image.md lists", () => {
    expect(dockerfile).toMatch(/^ARG TARGETARCH$/m);
    expect(dockerfile).toMatch(/^RUN .*ATTACHER_OUTFILE=dist\/csi-attacher bun run scripts\/build\.ts \$\{TARGETARCH:\+--target=\$TARGETARCH\}$/m);
    expect(["amd64", "arm64"].map((arch) => targetFor(arch).bunTarget)).toEqual(["bun-linux-x64", "bun-linux-arm64"]);
    // scripts/build.ts's own modules are in the build context it copies.
    expect(dockerfile).toMatch(/^COPY scripts\/build scripts\/build$/m);
  });

  it("runs the binary alone on distroless as a non-root user, with no shell in between", () => {
    const runStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    const instructions = runStage.split("\n").filter((line) => /^[A-Z]+ /.test(line));
    expect(instructions).toEqual([
      "FROM gcr.io/distroless/base-debian12:nonroot",
      "COPY --from=build /src/dist/csi-attacher /csi-attacher",
      "USER 65532:65532",
      'ENTRYPOINT ["/csi-attacher"]',
    ]);
  });
});
