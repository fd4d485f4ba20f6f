import * as v from "valibot";

/**
 * The schemas a flag of the attacher and a flag of the doctor share, so the
 * two tables accept and refuse the same values with the same words.
 */

/** A duration that must be above zero: a zero one would make a loop spin or every call fail at once. */
export const positiveDuration = v.pipe(v.number(), v.minValue(1, "must be greater than zero"));

/** --csi-address: upstream dials both a path and a unix:// URL; the transport wants the path. */
export const csiSocketAddress = v.pipe(
  v.string(),
  v.nonEmpty("must name the CSI driver's Unix socket"),
  v.transform((address: string) => address.replace(/^unix:\/\//, "")),
);
