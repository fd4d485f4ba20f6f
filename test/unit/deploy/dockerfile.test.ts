import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../../package.json" with { type: "json" };

const dockerfile = readFileSync(join(import.meta.dir, "../../../deploy/Dockerfile"), "utf8");

/** The image's Dockerfile, checked where no container engine runs. */
describe("deploy/Dockerfile", () => {
  it("builds with Bun's official image at the Bun version package.json pins", () => {
    expect(/^FROM oven\/bun:(\S+) AS build$/m.exec(dockerfile)?.[1]).toBe(packageJson.devDependencies.bun);
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
