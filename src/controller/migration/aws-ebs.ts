import * as v from "valibot";
import { errorMessage } from "../../util/error-message";
import { TranslationError } from "./errors";
import { type InTreePlugin, optionalBoolean, optionalString, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/aws-ebs` plugin. */
export const awsEbsDriverName = "ebs.csi.aws.com";

// The fields of AWSElasticBlockStoreVolumeSource the translation reads.
const awsElasticBlockStoreSchema = v.object({
  volumeID: requiredString,
  fsType: optionalString,
  partition: v.optional(v.pipe(v.number(), v.integer()), 0),
  readOnly: optionalBoolean,
});

// The two EBS volume ID formats: vol-12345678 and vol-12345678abcdef01.
const ebsVolumeIdPattern = /^vol-[^/]*$/;

/**
 * ebsVolumeIdOf turns a Kubernetes EBS volume ID into the EBS one the CSI
 * driver wants: `aws://<zone>/vol-x` and `aws:///vol-x` become `vol-x`;
 * anything without the `aws://` prefix is taken as a bare EBS ID, unchecked,
 * as csi-translation-lib does.
 */
export function ebsVolumeIdOf(kubernetesId: string): string {
  const scheme = "aws://";
  if (!kubernetesId.startsWith(scheme)) return kubernetesId;
  // A URL: the zone is the host, the volume ID the path (query and
  // fragment are no part of it, as with Go's url.Parse).
  const rest = kubernetesId.slice(scheme.length).replace(/[?#].*$/s, "");
  const slash = rest.indexOf("/");
  const rawPath = slash < 0 ? "" : rest.slice(slash);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch (e: unknown) {
    throw new TranslationError(`Invalid disk name (${kubernetesId}): invalid URL escape in path`, { cause: e });
  }
  const awsId = path.replace(/^\/+|\/+$/g, "");
  if (!ebsVolumeIdPattern.test(awsId)) throw new TranslationError(`Invalid format for AWS volume (${kubernetesId})`);
  return awsId;
}

/** awsEbsPlugin translates `awsElasticBlockStore` to `ebs.csi.aws.com`. */
export const awsEbsPlugin: InTreePlugin = {
  sourceField: "awsElasticBlockStore",
  driverName: awsEbsDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "awsElasticBlockStore", awsElasticBlockStoreSchema);
    let volumeHandle: string;
    try {
      volumeHandle = ebsVolumeIdOf(source.volumeID);
    } catch (e: unknown) {
      // Upstream's wording, without a separator before the cause.
      throw new TranslationError(`failed to translate Kubernetes ID to EBS Volume ID ${errorMessage(e)}`, { cause: e });
    }
    return {
      csi: {
        driver: awsEbsDriverName,
        volumeHandle,
        readOnly: source.readOnly,
        fsType: source.fsType,
        // Unlike GCE PD, EBS always writes the number, "0" included.
        volumeAttributes: { partition: String(source.partition) },
      },
    };
  },
  repairVolumeHandle: (volumeHandle) => volumeHandle,
};
