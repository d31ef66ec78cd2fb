import semver from "semver";
import type { MinorRange } from "./catalog";

/** A parsed Kubernetes version; `minor` is the comparable "1.34" form. */
export interface KubernetesVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** k3s build suffix ("k3s1") or undefined. */
  readonly build: string | undefined;
}

const kubernetesVersionPattern = /^v(\d+)\.(\d+)\.(\d+)$/;
// k3s numbers its builds of a patch k3s1, k3s2, … (never k3s0 or k3s01): one text per release.
const k3sVersionPattern = /^v(\d+)\.(\d+)\.(\d+)\+(k3s[1-9]\d*)$/;

/** Parses vMAJOR.MINOR.PATCH; returns undefined for anything else (no leading-v tolerance: CAPI wants the v). */
export function parseKubernetesVersion(text: string): KubernetesVersion | undefined {
  return parseWith(kubernetesVersionPattern, text);
}

/** Parses a k3s release, vMAJOR.MINOR.PATCH+k3sN. */
export function parseK3sVersion(text: string): KubernetesVersion | undefined {
  return parseWith(k3sVersionPattern, text);
}

function parseWith(pattern: RegExp, text: string): KubernetesVersion | undefined {
  const match = pattern.exec(text);
  if (!match || !semver.valid(text)) {
    return undefined;
  }
  const [, major, minor, patch, build] = match;
  return { major: Number(major), minor: Number(minor), patch: Number(patch), build };
}

/** "1.34" for a version. */
export function minorOf(version: KubernetesVersion): string {
  return `${version.major}.${version.minor}`;
}

/** Orders "1.9" < "1.31" numerically (string order would not). */
export function compareMinors(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = a.split(".").map(Number);
  const [bMajor = 0, bMinor = 0] = b.split(".").map(Number);
  return aMajor - bMajor || aMinor - bMinor;
}

/** True when the version's minor lies in the inclusive range. */
export function isMinorInRange(version: KubernetesVersion, range: MinorRange): boolean {
  const minor = minorOf(version);
  return compareMinors(minor, range.min) >= 0 && compareMinors(minor, range.max) <= 0;
}

/** "1.31–1.36" for messages. */
export function describeRange(range: MinorRange): string {
  return `${range.min}–${range.max}`;
}
