/**
 * InTreeSourceError is an in-tree volume source that does not have the shape
 * the translation reads (a missing `pdName`, a `partition` that is not a
 * number). It names the volume and the field, so the operator who reads the
 * VA's attachError knows which object to fix.
 */
export class InTreeSourceError extends Error {
  override name = "InTreeSourceError";
  /** What was being translated, e.g. `PersistentVolume "pv-1"`. */
  readonly subject: string;
  /** Dot path of the bad field inside the PV spec, e.g. `gcePersistentDisk.pdName`. */
  readonly field: string;

  constructor(subject: string, field: string, detail: string) {
    super(`${subject}: spec.${field}: ${detail}`);
    this.subject = subject;
    this.field = field;
  }
}

/**
 * TranslationError is an in-tree source whose values cannot be translated
 * (an EBS volume ID of the wrong format, zones of two regions, an unmanaged
 * Azure disk). Its message is csi-translation-lib's wording, which operators
 * already search for.
 */
export class TranslationError extends Error {
  override name = "TranslationError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
