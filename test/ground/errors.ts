/**
 * ManifestError is a deploy/kubernetes manifest that would not run as
 * written: its message names the manifest, the object and the field, and
 * says what is wrong, so a broken manifest fails a test with that sentence
 * instead of with a timeout.
 */
export class ManifestError extends Error {
  override name = "ManifestError";
  /** The field at fault, as a path (`spec.template.spec.containers[csi-attacher].args`). */
  readonly field: string;

  constructor(field: string, message: string, options?: ErrorOptions) {
    super(`${field}: ${message}`, options);
    this.field = field;
  }
}
