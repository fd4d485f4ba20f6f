/**
 * Names derived from the CSI driver's name, spelled exactly as upstream does:
 * operators' scripts and other controllers match on them.
 */

/**
 * sanitizeDriverName makes a driver name usable inside a finalizer or Lease
 * name: every character outside [a-zA-Z0-9-] becomes "-", and a trailing "-"
 * gets an "X" after it.
 */
export function sanitizeDriverName(driver: string): string {
  const name = driver.replace(/[^a-zA-Z0-9-]/g, "-");
  return name.endsWith("-") ? `${name}X` : name;
}

/** finalizerName is the finalizer this attacher puts on VAs and PVs of `driver`. */
export function finalizerName(driver: string): string {
  return `external-attacher/${sanitizeDriverName(driver)}`;
}
