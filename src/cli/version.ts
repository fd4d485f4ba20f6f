import packageJson from "../../package.json" with { type: "json" };

/** version is this build's version, taken from package.json when the binary is built. */
export const version: string = packageJson.version;
