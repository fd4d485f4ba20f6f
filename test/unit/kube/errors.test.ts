import { describe, expect, it } from "bun:test";
import { isNotFound, KubeApiError } from "../../../src/kube/errors";

describe("an API server answer that is not 2xx", () => {
  it("takes the reason and message of a Status body as the server wrote them", () => {
    const error = KubeApiError.from(404, JSON.stringify({ kind: "Status", reason: "NotFound", message: 'persistentvolumes "pv1" not found' }), "GET /pv1");
    expect({ reason: error.reason, message: error.message, notFound: isNotFound(error), cause: error.cause }).toEqual({
      reason: "NotFound",
      message: 'persistentvolumes "pv1" not found',
      notFound: true,
      cause: undefined,
    });
  });

  it("keeps a body that is not JSON as raw text, with the parse failure as its cause", () => {
    const error = KubeApiError.from(502, "<html>Bad Gateway</html>", "GET /pvs");
    expect({ message: error.message, cause: error.cause instanceof SyntaxError }).toEqual({ message: "GET /pvs: HTTP 502: <html>Bad Gateway</html>", cause: true });
  });

  it("keeps JSON that is not a Status as raw text, with no cause: nothing failed to parse", () => {
    const error = KubeApiError.from(500, '{"oops":true}', "GET /pvs");
    expect({ message: error.message, cause: error.cause }).toEqual({ message: 'GET /pvs: HTTP 500: {"oops":true}', cause: undefined });
  });
});
