import { describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { systemUpgrade, systemUpgradeControllerManifestUrl } from "../../infra/model/management/k3s-upgrades";
import { parseK3sVersion } from "../../infra/model/versions/kubernetes-version";
import { byType, one, runStack, useExistingCluster } from "../../tests/support/fleet-run";
import type { Registration } from "../../tests/support/pulumi-mocks";
import { componentTypes } from "../../infra/model/contract/component-types";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

const planType = "kubernetes:upgrade.cattle.io/v1:Plan";
const current = parseK3sVersion(catalog.k3s.version)!;
/** A release of the next minor (inside the management range the config checks). */
const nextMinor = `v${current.major}.${current.minor + 1}.0+k3s1`;

/** Runs a committed stack with `management.k3sVersion` set to `version` (unchanged when undefined). */
function runWithK3s(stack: string, version?: string) {
  return runStack(stack, (values) => {
    if (version === undefined) return;
    const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
    values["capi-fleet:management"] = JSON.stringify({ ...management, k3sVersion: version });
  });
}

const planOf = (registrations: readonly Registration[]) => one(registrations, planType).inputs as { metadata: Record<string, unknown>; spec: Record<string, unknown> };

describe("K3sUpgrades (hetzner mode)", () => {
  it.each(["dev", "prod"])("%s: declares the servers' Plan at management.k3sVersion: one server at a time, cordoned and drained", async (stack) => {
    const { registrations } = await runWithK3s(stack);
    const plan = planOf(registrations);
    expect(plan.metadata).toEqual({ name: "k3s-server", namespace: systemUpgrade.namespace });
    expect(plan.spec).toMatchObject({
      version: catalog.k3s.version,
      concurrency: 1,
      cordon: true,
      drain: expect.objectContaining({ ignoreDaemonSets: true, deleteEmptydirData: true }),
      serviceAccountName: systemUpgrade.serviceAccount,
      upgrade: { image: systemUpgrade.k3sUpgradeImage },
    });
    // k3s labels its servers node-role.kubernetes.io/control-plane=true; agents (none here) have no role label.
    expect(plan.spec.nodeSelector).toEqual({ matchExpressions: [{ key: "node-role.kubernetes.io/control-plane", operator: "In", values: ["true"] }] });
    expect(byType(registrations, planType)).toHaveLength(1); // no agent Plan: the management cluster has no agents
  });

  it("a k3sVersion change is a diff of the Plan's spec.version and nothing else of the upgrade", async () => {
    const before = (await runWithK3s("dev")).registrations;
    const after = (await runWithK3s("dev", nextMinor)).registrations;
    expect(planOf(after).spec.version).toBe(nextMinor);
    const { version: _before, ...restBefore } = planOf(before).spec;
    const { version: _after, ...restAfter } = planOf(after).spec;
    expect(restAfter).toEqual(restBefore);
    // The installer does not re-run for a k3s change (its environment holds the kubeconfig, which
    // the mocks mint anew per run): only the Plan moves.
    const installer = (registrations: readonly Registration[]) => {
      const { create, triggers } = one(registrations, "command:local:Command", "management-k3s-upgrades-install-controller").inputs;
      return { create, triggers };
    };
    expect(installer(after)).toEqual(installer(before));
  });

  it("installs the pinned controller by a local command at up, after the platform, with the kubeconfig secret", async () => {
    const { registrations } = await runWithK3s("dev");
    const installer = one(registrations, "command:local:Command", "management-k3s-upgrades-install-controller");
    expect(installer.inputs.create).toBe(`node ${scriptEntryPoints.installSystemUpgradeController}`);
    expect(installer.inputs.triggers).toEqual([catalog.systemUpgradeController.version, systemUpgradeControllerManifestUrl()]);
    expect(installer.secretInputs).toContain("environment");
    expect(installer.inputs.environment).toMatchObject({ MANIFEST_URL: systemUpgradeControllerManifestUrl(), WAIT_FOR_CRD: systemUpgrade.planCrd });
    expect(installer.inputs.logging).toBe("stderr");
    // The Plan waits for the installer (which waits for the CRD); the installer for Flux, the platform's last step.
    expect(one(registrations, planType).dependencies).toContain(installer.urn);
    // A component in dependsOn stands for its children (the SDK expands it).
    expect(installer.dependencies).toContain(one(registrations, "kubernetes:fluxcd.controlplane.io/v1:FluxInstance").urn);
    expect(systemUpgradeControllerManifestUrl()).toBe(
      `https://github.com/rancher/system-upgrade-controller/releases/download/${catalog.systemUpgradeController.version}/system-upgrade-controller.yaml`,
    );
  });

  it("exports the configured version as managementK3sVersion, which the next run reads back as deployed", async () => {
    const { outputs } = await runWithK3s("dev", nextMinor);
    expect(await new Promise((resolve) => outputs.managementK3sVersion.apply(resolve))).toBe(nextMinor);
  });

  it("existing mode: no controller, no Plan, no managementK3sVersion", async () => {
    const { registrations, outputs } = await runStack("dev", useExistingCluster(`v${current.major}.${current.minor}.${current.patch}`));
    expect(byType(registrations, planType)).toEqual([]);
    expect(byType(registrations, componentTypes.k3sUpgrades)).toEqual([]);
    expect(outputs.k3sUpgrades).toBeUndefined();
    expect(await new Promise((resolve) => outputs.managementK3sVersion.apply(resolve))).toBeUndefined();
  });
});
