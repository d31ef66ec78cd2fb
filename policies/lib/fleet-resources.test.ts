import { describe, expect, it } from "vitest";
import { engineViewOf } from "../testing/harness";
import { clusterView, dependsOnTransitively, isExempt, parseGoBool, selectorMatches, type LabelSelector } from "./fleet-resources";

describe("parseGoBool (strconv.ParseBool)", () => {
  it.each([
    ["1", true],
    ["t", true],
    ["T", true],
    ["TRUE", true],
    ["true", true],
    ["True", true],
    ["0", false],
    ["f", false],
    ["F", false],
    ["FALSE", false],
    ["false", false],
    ["False", false],
  ])("parses %j as %s", (value, expected) => {
    expect(parseGoBool(value)).toBe(expected);
  });

  it.each(["yes", "no", "", "FaLse", "tRUE", " false", "true ", "2", "on", "off", "y", "n"])("refuses %j", (value) => {
    expect(parseGoBool(value)).toBeUndefined();
  });
});

describe("selectorMatches", () => {
  const labels = { app: "web", tier: "front" };
  it.each<[string, LabelSelector, boolean]>([
    ["empty selector", {}, true],
    ["empty matchLabels and matchExpressions", { matchLabels: {}, matchExpressions: [] }, true],
    ["matchLabels all equal", { matchLabels: { app: "web", tier: "front" } }, true],
    ["matchLabels one differs", { matchLabels: { app: "web", tier: "back" } }, false],
    ["matchLabels key missing", { matchLabels: { zone: "a" } }, false],
    ["In, value listed", { matchExpressions: [{ key: "app", operator: "In", values: ["api", "web"] }] }, true],
    ["In, value not listed", { matchExpressions: [{ key: "app", operator: "In", values: ["api"] }] }, false],
    ["In, key missing", { matchExpressions: [{ key: "zone", operator: "In", values: [""] }] }, false],
    ["NotIn, value not listed", { matchExpressions: [{ key: "app", operator: "NotIn", values: ["api"] }] }, true],
    ["NotIn, value listed", { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] }, false],
    ["NotIn, key missing", { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] }, true],
    ["Exists, key present", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists, key missing", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    ["DoesNotExist, key missing", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist, key present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["unknown operator", { matchExpressions: [{ key: "app", operator: "Equals", values: ["web"] }] }, false],
    ["lower-case operator", { matchExpressions: [{ key: "app", operator: "in", values: ["web"] }] }, false],
    ["matchLabels and expressions both hold", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["matchLabels hold, an expression fails", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, false],
  ])("%s → %s", (_label, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  it("does not match an empty label set with a matchLabels selector", () => {
    expect(selectorMatches({ matchLabels: { app: "web" } }, {})).toBe(false);
  });
});

describe("isExempt", () => {
  const labelled = clusterView({ metadata: { name: "payments-eu", namespace: "tenant-payments", labels: { "capi-fleet.io/tenant": "payments" } } });
  const unlabelled = clusterView({ metadata: { name: "edge" } });

  it.each<[string, readonly string[], boolean]>([
    ["no exemptions", [], false],
    ["the tenant label", ["payments"], true],
    ["namespace/name", ["tenant-payments/payments-eu"], true],
    ["the Cluster's name alone (tenant label differs)", ["payments-eu"], false],
    ["another tenant", ["analytics"], false],
    ["the tenant under the wrong namespace", ["tenant-analytics/payments-eu"], false],
    ["a different case", ["Payments"], false],
  ])("labelled Cluster, exemptions naming %s → %s", (_label, exemptions, expected) => {
    expect(isExempt(exemptions, labelled)).toBe(expected);
  });

  it.each<[string, readonly string[], boolean]>([
    ["its name (the tenant without a label)", ["edge"], true],
    ["default/name", ["default/edge"], true],
    ["another namespace", ["tenant-edge/edge"], false],
  ])("unlabelled Cluster, exemptions naming %s → %s", (_label, exemptions, expected) => {
    expect(isExempt(exemptions, unlabelled)).toBe(expected);
  });
});

describe("dependsOnTransitively", () => {
  const type = "test:index:Thing";
  const graph = engineViewOf([
    { type, name: "gate", props: {} },
    { type, name: "direct", props: {}, dependsOn: ["gate"] },
    { type, name: "transitive", props: {}, dependsOn: ["direct"] },
    { type, name: "unrelated", props: {} },
    { type, name: "cycle-a", props: {}, dependsOn: ["cycle-b"] },
    { type, name: "cycle-b", props: {}, dependsOn: ["cycle-a", "unrelated"] },
    { type, name: "cycle-to-gate", props: {}, dependsOn: ["cycle-a", "transitive"] },
  ]).forResourceRules;
  const named = (name: string) => graph.find((resource) => resource.name === name)!;

  it.each([
    ["direct", "gate", true],
    ["transitive", "gate", true],
    ["cycle-to-gate", "gate", true],
    ["cycle-a", "gate", false],
    ["cycle-a", "unrelated", true],
    ["cycle-a", "cycle-a", true],
    ["gate", "direct", false],
    ["unrelated", "gate", false],
    ["gate", "gate", false],
  ])("%s depends on %s: %s", (from, to, expected) => {
    expect(dependsOnTransitively(named(from), named(to))).toBe(expected);
  });
});
