import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { pluginModule } from "../../../tests/support/plugins";
import { dirOrThrow, goModule } from "../../../tests/support/upstream";
import { interruptedRelease, type HelmRevision } from "./helm-history";

const chart = "cert-manager";
const revisions = (...statuses: string[]): HelmRevision[] => statuses.map((status, index) => ({ revision: index + 1, status, chart }));

/** The Helm the Kubernetes provider runs: its version from the provider's go.mod, its source from the proxy. */
function providersHelm(): string {
  const provider = pluginModule("kubernetes");
  const goMod = readFileSync(path.join(dirOrThrow("the Kubernetes provider", goModule(provider.module, provider.pin)), "go.mod"), "utf8");
  const version = /^\s*helm\.sh\/helm\/v3 (v\S+)/m.exec(goMod)?.[1];
  if (!version) throw new Error("the Kubernetes provider's go.mod requires no helm.sh/helm/v3");
  return dirOrThrow(`helm.sh/helm/v3@${version}`, goModule("helm.sh/helm/v3", version));
}

describe("interruptedRelease", () => {
  it.each([
    ["nothing recorded", [], "create", undefined],
    ["an install cut off while Helm waited", revisions("pending-install"), "create", [1]],
    ["an install whose wait was cancelled (Helm marks it failed)", revisions("failed"), "create", [1]],
    ["a release that once deployed is not ours to clear before a create", revisions("superseded", "failed"), "create", undefined],
    ["a deployed release (someone else's, same name)", revisions("deployed"), "create", undefined],
    ["an upgrade cut off", revisions("deployed", "pending-upgrade"), "update", [2]],
    ["a rollback cut off", revisions("superseded", "deployed", "pending-rollback"), "update", [3]],
    ["a failed upgrade: Helm upgrades from it on its own", revisions("deployed", "failed"), "update", undefined],
    ["a lone pending install before an update: nothing to fall back to", revisions("pending-install"), "update", undefined],
    ["a settled release", revisions("superseded", "deployed"), "update", undefined],
  ] as const)("%s", (_case, history, step, expected) => {
    expect(interruptedRelease(history, chart, step)?.revisions).toEqual(expected);
  });

  it("leaves another chart's release of the same name alone", () => {
    expect(interruptedRelease([{ revision: 1, status: "pending-install", chart: "other" }], chart, "create")).toBeUndefined();
  });

  it("leaves a history alone when any of its records is another chart's", () => {
    expect(interruptedRelease([...revisions("pending-install"), { revision: 2, status: "pending-install", chart: "other" }], chart, "create")).toBeUndefined();
  });

  it("says which records it clears, and why, for the log", () => {
    expect(interruptedRelease(revisions("pending-install", "failed"), chart, "create")?.reason).toBe(
      "an install that never completed (revision 1: pending-install, revision 2: failed)",
    );
    expect(interruptedRelease(revisions("deployed", "pending-upgrade"), chart, "update")?.reason).toBe("an upgrade that never completed (revision 2: pending-upgrade)");
  });

  it("orders by revision, not by the order Kubernetes lists the records in", () => {
    const history = revisions("deployed", "pending-upgrade").reverse();
    expect(interruptedRelease(history, chart, "update")?.revisions).toEqual([2]);
  });

  it("treats as pending exactly the states the provider's Helm calls pending, so every upgrade Helm refuses with errPending is cleared", () => {
    const status = readFileSync(path.join(providersHelm(), "pkg", "release", "status.go"), "utf8");
    const names = Object.fromEntries([...status.matchAll(/^\s*(Status\w+)\s+Status\s*=\s*"([^"]+)"/gm)].map((match) => [match[1]!, match[2]!]));
    const isPending = /func \(x Status\) IsPending\(\) bool \{\s*return ([^\n]+)/.exec(status)?.[1] ?? "";
    const helmPending = [...isPending.matchAll(/Status\w+/g)].map((match) => names[match[0]]);
    expect(helmPending.length).toBeGreaterThan(0);
    for (const state of Object.values(names)) {
      const cleared = interruptedRelease(revisions("deployed", state), chart, "update") !== undefined;
      expect(cleared, state).toBe(helmPending.includes(state));
    }
  });
});
