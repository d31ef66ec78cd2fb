/** Helm values: a mapping of keys to anything. */
export type HelmValues = Record<string, unknown>;

const isMapping = (value: unknown): value is HelmValues => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Helm's coalescing of a release's values over a chart's defaults: mappings merge key by key,
 * anything else (lists included) is replaced by the release's value.
 */
export function coalesceValues(defaults: HelmValues, overrides: HelmValues): HelmValues {
  const merged: HelmValues = { ...defaults };
  for (const [key, value] of Object.entries(overrides)) {
    const base = merged[key];
    merged[key] = isMapping(value) && isMapping(base) ? coalesceValues(base, value) : value;
  }
  return merged;
}
