import { describe, expect, it } from "vitest";
import { catalog } from "./catalog";
import { compareMinors, isMinorInRange, minorOf, parseK3sVersion, parseKubernetesVersion } from "./kubernetes-version";

describe("kubernetes versions", () => {
  it.each([
    ["v1.34.6", { major: 1, minor: 34, patch: 6, build: undefined }],
    ["1.34.6", undefined],
    ["v1.34", undefined],
    ["v1.34.6+k3s1", undefined],
    ["v01.34.6", undefined],
  ])("parses %j", (text, expected) => {
    expect(parseKubernetesVersion(text)).toEqual(expected);
  });

  it.each([
    ["v1.34.6+k3s1", "1.34"],
    ["v1.31.12+k3s2", "1.31"],
  ])("parses the k3s release %s", (text, minor) => {
    expect(minorOf(parseK3sVersion(text)!)).toBe(minor);
  });

  it("rejects k3s releases without the suffix, or with a build number k3s never uses", () => {
    for (const text of ["v1.34.6", "v1.34.6+k3s", "v1.34.6+k3s0", "v1.34.6+k3s01", "v1.34.6+rke2r1"]) {
      expect(parseK3sVersion(text), text).toBeUndefined();
    }
  });

  it("orders minors numerically", () => {
    expect(compareMinors("1.9", "1.31")).toBeLessThan(0);
    expect(compareMinors("1.31", "1.31")).toBe(0);
  });

  it.each([
    ["v1.31.0", true],
    ["v1.36.9", true],
    ["v1.30.14", false],
    ["v1.37.0", false],
  ])("%s is in the CAPI management range: %s", (text, expected) => {
    expect(isMinorInRange(parseKubernetesVersion(text)!, catalog.clusterApi.managementKubernetes)).toBe(expected);
  });

  it("pins a catalog that is consistent with itself", () => {
    const tenantVersions = catalog.tenantKubernetesVersions.map((text) => parseKubernetesVersion(text)!);
    for (const version of tenantVersions) {
      expect(isMinorInRange(version, catalog.clusterApi.workloadKubernetes)).toBe(true);
      expect(isMinorInRange(version, catalog.caph.workloadKubernetes)).toBe(true);
    }
    // kubernetesVersions: strictly increasing, one minor apart (CAPI's ClusterClass rule).
    tenantVersions.slice(1).forEach((version, index) => {
      expect(version.minor - tenantVersions[index]!.minor).toBe(1);
    });
    expect(isMinorInRange(parseK3sVersion(catalog.k3s.version)!, catalog.clusterApi.managementKubernetes)).toBe(true);
  });
});
