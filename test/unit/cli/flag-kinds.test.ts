import { describe, expect, it } from "bun:test";
import { boolKind, floatKind, intKind, quantityKind, uintKind, vmoduleKind } from "../../../src/cli/flag-kinds";

describe("Go's value syntax", () => {
  it.each([
    ["42", 42],
    ["-7", -7],
    ["+7", 7],
    ["0x1F", 31],
    ["0o17", 15],
    ["017", 15],
    ["0b101", 5],
    ["0x_1F", 31],
    ["0", 0],
  ])("reads the int %p as strconv.ParseInt base 0 does", (text, value) => {
    expect(intKind.read(text, undefined)).toEqual({ ok: true, value });
  });

  it.each(["", "1.0", "1e3", "ten", "08", "1_000", "0x", "99999999999999999999"])("refuses the int %p", (text) => {
    expect(intKind.read(text, undefined).ok).toBe(false);
  });

  it("refuses a signed uint", () => {
    expect([uintKind.read("-1", undefined).ok, uintKind.read("+1", undefined).ok, uintKind.read("1", undefined).ok]).toEqual([false, false, true]);
  });

  it.each([
    ["5", 5],
    ["5.0", 5],
    [".5", 0.5],
    ["1e2", 100],
    ["-2.5", -2.5],
  ])("reads the float %p", (text, value) => {
    expect(floatKind.read(text, undefined)).toEqual({ ok: true, value });
  });

  it("reads strconv.ParseBool's spellings and nothing else", () => {
    const read = (text: string) => {
      const result = boolKind.read(text, undefined);
      return result.ok ? result.value : "refused";
    };
    expect(["1", "t", "T", "true", "TRUE", "True", "0", "f", "F", "false", "FALSE", "False", "yes", "on", ""].map(read)).toEqual([
      true, true, true, true, true, true, false, false, false, false, false, false, "refused", "refused", "refused",
    ]);
  });

  it.each([
    ["512", 512],
    ["1k", 1000],
    ["1K", 1000],
    ["2Ki", 2048],
    ["3M", 3_000_000],
    ["5Mi", 5 * 2 ** 20],
    ["1e3", 1000],
    ["0", 0],
  ])("reads the quantity %p", (text, value) => {
    expect(quantityKind.read(text, undefined)).toEqual({ ok: true, value });
  });

  it("reads vmodule entries, skipping empty ones, adding to earlier occurrences", () => {
    const first = vmoduleKind.read("a=1,", undefined);
    expect(first.ok && vmoduleKind.read("b*=3", first.value)).toEqual({ ok: true, value: [{ pattern: "a", verbosity: 1 }, { pattern: "b*", verbosity: 3 }] });
    expect(["=1", "a=", "a=b", "a=1=2"].map((text) => vmoduleKind.read(text, undefined).ok)).toEqual([false, false, false, false]);
  });
});
