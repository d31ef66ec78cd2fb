import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { catalog, type MinorRange } from "./catalog";
import { describeConstraints, intersectRanges, managementKubernetesConstraints, type KubernetesConstraint } from "./compatibility";
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

  it("contains the catalog's k3s release", () => {
    const range = intersectRanges(managementKubernetesConstraints("hetzner"))!;
    const k3sMinor = /^v(\d+\.\d+)\./.exec(catalog.k3s.version)![1]!;
    expect(compareMinors(k3sMinor, range.min)).toBeGreaterThanOrEqual(0);
    expect(compareMinors(k3sMinor, range.max)).toBeLessThanOrEqual(0);
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
