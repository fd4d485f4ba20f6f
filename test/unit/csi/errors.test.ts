import { describe, expect, it } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { CsiCallError } from "../../../src/csi/errors";

describe("driver errors", () => {
  it("print as Go's gRPC prints a status", () => {
    expect(CsiCallError.from(new ConnectError("volume vol-1 not found", Code.NotFound), false).message).toBe(
      "rpc error: code = NotFound desc = volume vol-1 not found",
    );
  });

  it("say 'context deadline exceeded' when our own deadline fired, as Go's context does", () => {
    expect(CsiCallError.from(new ConnectError("the operation timed out", Code.DeadlineExceeded), true).message).toBe(
      "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    );
  });
});
