import { afterEach, describe, expect, it } from "bun:test";
import { defaultFloorApiStack, floorApiStackFromEnv, floorApiStacks, isFloorApiStack } from "../floor/floor-api-stacks";

describe("the floor's ways to kube-apiserver", () => {
  const saved = process.env["FLOOR_API_STACK"];
  afterEach(() => {
    if (saved === undefined) delete process.env["FLOOR_API_STACK"];
    else process.env["FLOOR_API_STACK"] = saved;
  });

  it("takes ours' own stack when FLOOR_API_STACK names none", () => {
    delete process.env["FLOOR_API_STACK"];
    expect(floorApiStackFromEnv()).toBe("own");
    expect(defaultFloorApiStack).toBe("own");
  });

  it("takes the stack FLOOR_API_STACK names, each one the table words", () => {
    for (const name of Object.keys(floorApiStacks)) {
      process.env["FLOOR_API_STACK"] = name;
      expect(floorApiStackFromEnv()).toBe(name as keyof typeof floorApiStacks);
    }
  });

  it("knows no stack outside its table, not even an inherited property's name", () => {
    expect(isFloorApiStack("nope")).toBe(false);
    expect(isFloorApiStack("toString")).toBe(false);
    expect(isFloorApiStack("fetch")).toBe(true);
  });
});
