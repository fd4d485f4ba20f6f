import type { Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger";
import { CsiCallError } from "./errors";
import { stripSecrets } from "./strip-secrets";

/** The -v level at which gRPC payloads are logged, as upstream's sidecars do. */
export const grpcLogLevel = 5;

export interface GrpcLogInterceptorOptions {
  readonly log: Logger;
  /**
   * Longest response text logged, in characters (--max-grpc-log-length);
   * longer ones are cut and say so. 0 or negative: no cap. Default -1.
   * Requests are never cut, as upstream's.
   */
  readonly maxLogLength?: number;
}

/** resolveGrpcLogInterceptorOptions fills the defaults of every optional field. */
function resolveGrpcLogInterceptorOptions(options: GrpcLogInterceptorOptions): Required<GrpcLogInterceptorOptions> {
  return { log: options.log, maxLogLength: options.maxLogLength ?? -1 };
}

/**
 * createGrpcLogInterceptor logs every unary CSI call at -v=5 as upstream's
 * csi-lib-utils `connection.LogGRPC` does: "GRPC call" (the full method),
 * "GRPC request", then "GRPC response" and "GRPC error" (`<nil>` on
 * success), with secret fields stripped from both messages. At lower
 * verbosity it passes calls straight through, rendering nothing.
 */
export function createGrpcLogInterceptor(options: GrpcLogInterceptorOptions): Interceptor {
  const { log, maxLogLength } = resolveGrpcLogInterceptorOptions(options);
  return (next) => async (req) => {
    const debug = log.v(grpcLogLevel);
    if (!debug.enabled || req.stream) return next(req);
    const method = `/${req.service.typeName}/${req.method.name}`;
    debug.info("GRPC call", { method });
    debug.info("GRPC request", { request: stripSecrets(req.method.input, req.message) });
    try {
      const res = await next(req);
      if (!res.stream) {
        debug.info("GRPC response", { response: capped(stripSecrets(req.method.output, res.message), maxLogLength) });
      }
      debug.info("GRPC error", { err: null });
      return res;
    } catch (e: unknown) {
      // Go's gRPC leaves the reply empty on error, and LogGRPC prints it all the same.
      debug.info("GRPC response", { response: "{}" });
      debug.info("GRPC error", { err: CsiCallError.from(e, false).message });
      throw e;
    }
  };
}

function capped(text: string, maxLength: number): string {
  if (maxLength <= 0 || text.length <= maxLength) return text;
  return `${text.slice(0, maxLength)} [response body too large, log capped to ${maxLength} chars]`;
}
