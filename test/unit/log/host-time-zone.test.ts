import { describe, expect, it } from "bun:test";
import { localTimeIsUtc } from "../../../src/log/host-time-zone";

function noSuchFile(): never {
  throw Object.assign(new Error("ENOENT: no such file or directory, readlink '/etc/localtime'"), { code: "ENOENT" });
}
function notALink(): never {
  throw Object.assign(new Error("EINVAL: invalid argument, readlink '/etc/localtime'"), { code: "EINVAL" });
}

describe("localTimeIsUtc", () => {
  it("follows TZ when it is set: empty and UTC's names are UTC, with or without POSIX's leading colon; any other zone is not", () => {
    const answers = ["", "UTC", ":UTC", "Etc/UTC", ":Etc/UTC", "Zulu", "Europe/Berlin", "America/New_York", "EST5EDT", "Etc/GMT+1"].map((tz) => [tz, localTimeIsUtc({ env: { TZ: tz }, readLink: () => "/usr/share/zoneinfo/Asia/Tokyo" })]);
    expect(answers).toEqual([
      ["", true],
      ["UTC", true],
      [":UTC", true],
      ["Etc/UTC", true],
      [":Etc/UTC", true],
      ["Zulu", true],
      ["Europe/Berlin", false],
      ["America/New_York", false],
      ["EST5EDT", false],
      ["Etc/GMT+1", false],
    ]);
  });

  it("without TZ, reads the zone /etc/localtime links to", () => {
    const answers = ["/usr/share/zoneinfo/Etc/UTC", "../usr/share/zoneinfo/UTC", "/usr/share/zoneinfo/posix/Etc/UTC", "/usr/share/zoneinfo/right/UTC", "/usr/share/zoneinfo/Europe/London", "/somewhere/else"].map((target) => [target, localTimeIsUtc({ env: {}, readLink: () => target })]);
    expect(answers).toEqual([
      ["/usr/share/zoneinfo/Etc/UTC", true],
      ["../usr/share/zoneinfo/UTC", true],
      ["/usr/share/zoneinfo/posix/Etc/UTC", true],
      // right/ zones count leap seconds: not UTC's wall clock.
      ["/usr/share/zoneinfo/right/UTC", false],
      ["/usr/share/zoneinfo/Europe/London", false],
      ["/somewhere/else", false],
    ]);
  });

  it("takes a missing /etc/localtime for UTC, as Go and glibc do, and a regular file there for an unknown zone", () => {
    expect([localTimeIsUtc({ env: {}, readLink: noSuchFile }), localTimeIsUtc({ env: {}, readLink: notALink })]).toEqual([true, false]);
  });
});
