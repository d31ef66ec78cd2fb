import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { catalog, type MinorRange } from "./catalog";
import {
  clusterApiCreatesKubeletApiAdmin,
  describeConstraints,
  intersectRanges,
  managementKubernetesConstraints,
  type KubernetesConstraint,
} from "./compatibility";
import { compareMinors } from "./kubernetes-version";

const constraint = (min: string, max: string): KubernetesConstraint => ({ component: `c${min}-${max}`, range: { min, max } });

describe("intersectRanges", () => {
  it.each<[KubernetesConstraint[], MinorRange | undefined]>([
    [[constraint("1.31", "1.36"), constraint("1.33", "1.36")], { min: "1.33", max: "1.36" }],
    [[constraint("1.31", "1.36"), constraint("1.9", "1.34")], { min: "1.31", max: "1.34" }],
    [[constraint("1.31", "1.32"), constraint("1.34", "1.36")], undefined],
    [[], undefined],
  ])("%j → %j", (constraints, expected) => {
    expect(intersectRanges(constraints)).toEqual(expected);
  });

  it("returns a range inside every input, or undefined only when two inputs are disjoint", () => {
    const minor = fc.integer({ min: 20, max: 40 }).map((n) => `1.${n}`);
    const range = fc.tuple(minor, minor).map(([a, b]) => (compareMinors(a, b) <= 0 ? constraint(a, b) : constraint(b, a)));
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 5 }), (constraints) => {
        const result = intersectRanges(constraints);
        if (result) {
          for (const { range: r } of constraints) {
            expect(compareMinors(result.min, r.min)).toBeGreaterThanOrEqual(0);
            expect(compareMinors(result.max, r.max)).toBeLessThanOrEqual(0);
          }
        } else {
          const disjoint = constraints.some((a) => constraints.some((b) => compareMinors(a.range.max, b.range.min) < 0));
          expect(disjoint).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("the management cluster's range", () => {
  it("is limited by CAPI, cert-manager and Flux, plus the hcloud CCM in hetzner mode", () => {
    expect(managementKubernetesConstraints("existing").map((c) => c.range)).toEqual([
      catalog.clusterApi.managementKubernetes,
      catalog.certManager.kubernetes,
      catalog.flux.kubernetes,
    ]);
    expect(managementKubernetesConstraints("hetzner")).toHaveLength(4);
    expect(describeConstraints(managementKubernetesConstraints("hetzner"))).toContain(`hcloud-cloud-controller-manager ${catalog.hcloudCloudControllerManager.chart.version}`);
  });

  // The hcloud CCM's range is a reading (hetznercloud/hcloud-cloud-controller-manager@v1.35.0:
  // docs/reference/version-policy.md, 1.33–1.36); the Go module proxy refuses that module, so
  // it cannot be read here. With it, the CCM narrows nothing: k3s gets what an existing cluster gets.
  it("is 1.34–1.36 in both modes: the CCM (1.33–1.36) no longer caps k3s below 1.36", () => {
    expect(intersectRanges(managementKubernetesConstraints("hetzner"))).toEqual({ min: "1.34", max: "1.36" });
    expect(intersectRanges(managementKubernetesConstraints("hetzner"))).toEqual(intersectRanges(managementKubernetesConstraints("existing")));
  });

  it("contains the catalog's k3s release", () => {
    const range = intersectRanges(managementKubernetesConstraints("hetzner"))!;
    const k3sMinor = /^v(\d+\.\d+)\./.exec(catalog.k3s.version)![1]!;
    expect(compareMinors(k3sMinor, range.min)).toBeGreaterThanOrEqual(0);
    expect(compareMinors(k3sMinor, range.max)).toBeLessThanOrEqual(0);
  });
});

describe("the constraints' names in messages", () => {
  it("name each component with a version the catalog pins, and describeConstraints keeps them apart", () => {
    const pins = JSON.stringify(catalog);
    for (const mode of ["hetzner", "existing"] as const) {
      const constraints = managementKubernetesConstraints(mode);
      for (const { component } of constraints) {
        const version = /\bv?\d+\.\d+\.\d+\b/.exec(component)?.[0];
        expect(version, component).toBeDefined();
        expect(pins, component).toContain(`"${version}"`);
        expect(component.replace(version ?? "", "").trim(), component).not.toBe("");
      }
      expect(new Set(constraints.map((c) => c.component)).size).toBe(constraints.length);
      expect(describeConstraints(constraints).split(", ")).toHaveLength(constraints.length);
    }
  });
});

// CAPI creates the ClusterRole system:kubelet-api-admin from the listed patch of each release line on;
// lines newer than the table always do, older ones never (the table's own rule).
describe("clusterApiCreatesKubeletApiAdmin", () => {
  const table = { "1.13": "v1.13.2", "1.9": "v1.9.5", "1.11": "v1.11.11" };

  it("compares a listed line's patch with its minimum", () => {
    expect(clusterApiCreatesKubeletApiAdmin("v1.11.11", table)).toBe(true);
    expect(clusterApiCreatesKubeletApiAdmin("v1.11.10", table)).toBe(false);
    expect(clusterApiCreatesKubeletApiAdmin("v1.9.5", table)).toBe(true);
  });

  it("takes the newest line numerically, whatever the table's order: newer lines do, older unlisted ones do not", () => {
    expect(clusterApiCreatesKubeletApiAdmin("v1.14.0", table)).toBe(true);
    expect(clusterApiCreatesKubeletApiAdmin("v1.12.0", table)).toBe(false);
    expect(clusterApiCreatesKubeletApiAdmin("v1.10.0", table)).toBe(false);
    expect(clusterApiCreatesKubeletApiAdmin("v1.8.0", table)).toBe(false);
  });

  it("refuses what is not a version, and uses the catalog's table by default", () => {
    expect(clusterApiCreatesKubeletApiAdmin("main", table)).toBe(false);
    expect(clusterApiCreatesKubeletApiAdmin("main")).toBe(false);
    for (const [line, minimum] of Object.entries(catalog.kubeletApiAdminRule.minimumClusterApi)) {
      expect(clusterApiCreatesKubeletApiAdmin(minimum), line).toBe(true);
    }
  });
});

describe("the tenant versions", () => {
  it("lie inside CAPI, CAPH, Cilium and CAREN's tested minors, one patch per minor without gaps", () => {
    const minors = catalog.tenantKubernetesVersions.map((v) => /^v(\d+\.\d+)\./.exec(v)![1]!);
    for (const range of [catalog.clusterApi.workloadKubernetes, catalog.caph.workloadKubernetes, catalog.cilium.kubernetes]) {
      for (const minor of minors) {
        expect(compareMinors(minor, range.min)).toBeGreaterThanOrEqual(0);
        expect(compareMinors(minor, range.max)).toBeLessThanOrEqual(0);
      }
    }
    expect(catalog.tenantKubernetesVersions.every((v) => (catalog.caren.testedKubernetes as readonly string[]).includes(v))).toBe(true);
    for (let i = 1; i < minors.length; i += 1) {
      expect(compareMinors(minors[i]!, minors[i - 1]!)).toBe(1);
    }
  });
});
