/**
 * The feature gates `--feature-gates` knows: those external-attacher v4.13
 * registers in its pkg/features, with upstream's defaults and stages, plus
 * component-base's AllAlpha and AllBeta switches.
 */
const featureGateSpecs = {
  // KEP-4876: CSINode allocatable count updates; also lets the attacher set ErrorCode in VolumeAttachment status.
  MutableCSINodeAllocatableCount: { defaultValue: false, stage: "BETA" },
  // Release the leader-election Lease on SIGTERM/SIGINT instead of letting it expire.
  ReleaseLeaderElectionOnExit: { defaultValue: false, stage: "ALPHA" },
} as const satisfies Readonly<Record<string, { readonly defaultValue: boolean; readonly stage: "ALPHA" | "BETA" }>>;

export type FeatureGateName = keyof typeof featureGateSpecs;

/** FeatureGates is every known gate resolved to its default or the operator's setting. */
export type FeatureGates = { readonly [Name in FeatureGateName]: boolean };

const gateNames = Object.keys(featureGateSpecs) as FeatureGateName[];
const allStageSwitches = { AllAlpha: "ALPHA", AllBeta: "BETA" } as const;

function isGateName(name: string): name is FeatureGateName {
  return Object.hasOwn(featureGateSpecs, name);
}

function isStageSwitch(name: string): name is keyof typeof allStageSwitches {
  return Object.hasOwn(allStageSwitches, name);
}

/** knownFeatureGateNames lists what `--feature-gates` accepts, sorted, for messages. */
export const knownFeatureGateNames: readonly string[] = [...Object.keys(allStageSwitches), ...gateNames].sort();

/** unknownFeatureGate returns the first name in `settings` that is no gate, or undefined. */
export function unknownFeatureGate(settings: Readonly<Record<string, boolean>>): string | undefined {
  return Object.keys(settings).find((name) => !isGateName(name) && !isStageSwitch(name));
}

/**
 * resolveFeatureGates applies the operator's settings over the defaults the
 * way component-base does: AllAlpha/AllBeta set every gate of that stage the
 * operator did not name; a named gate always wins. Unknown names are the
 * caller's to reject first (see unknownFeatureGate).
 */
export function resolveFeatureGates(settings: Readonly<Record<string, boolean>>): FeatureGates {
  const resolved = {} as Record<FeatureGateName, boolean>;
  for (const name of gateNames) {
    const spec = featureGateSpecs[name];
    const stageSwitch = spec.stage === "ALPHA" ? settings.AllAlpha : settings.AllBeta;
    resolved[name] = settings[name] ?? stageSwitch ?? spec.defaultValue;
  }
  return resolved;
}

/** featureGatesHelp is the "Options are:" list of --help, in component-base's wording. */
export function featureGatesHelp(): string {
  const lines = [
    ...Object.entries(allStageSwitches).map(([name, stage]) => `${name}=true|false (${stage} - default=false)`),
    ...gateNames.map((name) => `${name}=true|false (${featureGateSpecs[name].stage} - default=${featureGateSpecs[name].defaultValue})`),
  ];
  return lines.sort().join("\n");
}
