import { ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { CsiOperationObserver } from "../metrics/csi-operation-observer";
import { realClock, type Clock } from "../util/clock";
import { codeName } from "./errors";

/**
 * migratedVolumeKey says, in a call's `contextValues`, that the volume of
 * this CSI call was translated from an in-tree PV (CSI migration). The
 * handler sets it per call; the operation metrics turn it into the
 * `migrated` label. Default false, as upstream records "false" when nothing
 * was set.
 */
export const migratedVolumeKey = createContextKey<boolean>(false, { description: "CSI call for a migrated in-tree volume" });

/** Options for {@link createOperationMetricsInterceptor}. */
export interface OperationMetricsInterceptorOptions {
  /** Where each finished call goes. Required. */
  readonly observer: CsiOperationObserver;
  /** Times each call. Default: realClock. */
  readonly clock?: Clock;
}

/** resolveOperationMetricsInterceptorOptions fills the defaults of every optional field. */
function resolveOperationMetricsInterceptorOptions(options: OperationMetricsInterceptorOptions): Required<OperationMetricsInterceptorOptions> {
  return { observer: options.observer, clock: options.clock ?? realClock };
}

/**
 * createOperationMetricsInterceptor times every unary CSI call, start-up
 * calls (Probe, GetPluginInfo) included, and reports it with its outcome:
 * csi-lib-utils records from a gRPC client interceptor on the connection,
 * so every call through it counts. The error is rethrown untouched.
 */
export function createOperationMetricsInterceptor(options: OperationMetricsInterceptorOptions): Interceptor {
  const { observer, clock } = resolveOperationMetricsInterceptorOptions(options);
  return (next) => async (request) => {
    // The attacher makes no streaming calls; a stream's end is not here.
    if (request.stream) return next(request);
    const method = `/${request.service.typeName}/${request.method.name}`;
    const migrated = request.contextValues.get(migratedVolumeKey);
    const started = clock.monotonic();
    // A clock stepped back during the call records it as taking no time, not less than none.
    const observe = (code: string) => observer.observe({ method, code, seconds: Math.max(0, clock.monotonic() - started) / 1000, migrated });
    try {
      const response = await next(request);
      observe(codeName(0));
      return response;
    } catch (e: unknown) {
      // Go's status.FromError fails only for errors that never became a
      // gRPC status; Connect turns every transport failure into one.
      observe(e instanceof ConnectError ? codeName(e.code) : "unknown-non-grpc");
      throw e;
    }
  };
}
