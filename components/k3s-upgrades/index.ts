import * as command from "@pulumi/command";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { catalog } from "../../infra/model/versions/catalog";
import { k3sServerPlan, systemUpgrade, systemUpgradeControllerManifestUrl } from "../../infra/model/management/k3s-upgrades";
import { localCommandDir } from "../local-command-dir";
import { upstreamOf } from "../upstream";
import { componentTypes } from "../../infra/model/contract/component-types";
import { componentOutputs } from "../../infra/model/contract/outputs";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

/** Arguments of {@link K3sUpgrades}. */
export interface K3sUpgradesArgs {
  /** The k3s release every server should run: `management.k3sVersion`. */
  k3sVersion: string;
  /** Admin kubeconfig of the management cluster (secret), for the installer. */
  managementKubeconfig: pulumi.Input<string>;
  /** How long the installer waits for the controller to register the Plan CRD (default 600 s). */
  installWaitSeconds?: number;
}

/**
 * In-place k3s upgrades of the management servers (`hetzner` mode): installs the pinned
 * system-upgrade-controller and declares the servers' Plan, whose `spec.version` follows
 * `management.k3sVersion`, so a version change is a reviewed Plan diff and, after `up`, an
 * upgrade of one server at a time.
 *
 * The controller comes from its release manifest, applied by a local command at `up`
 * (components/k3s-upgrades/install-system-upgrade-controller.mjs, server-side apply): nothing is fetched at
 * preview, and nothing upstream is copied into the repository (docs/architecture.md says why
 * not a chart or `yaml.ConfigFile`). The controller registers the Plan CRD itself at startup;
 * the installer returns once it is Established, and only then is the Plan created.
 */
export class K3sUpgrades extends pulumi.ComponentResource {
  /** The servers' Plan. */
  public readonly serverPlan: k8s.apiextensions.CustomResource;
  /** The installer command (re-runs when the pinned release changes). */
  public readonly installer: command.local.Command;

  constructor(name: string, args: K3sUpgradesArgs, opts?: pulumi.ComponentResourceOptions) {
    // Only the version goes in as a recorded input; the kubeconfig never does.
    super(componentTypes.k3sUpgrades, name, { k3sVersion: args.k3sVersion }, opts);
    const manifestUrl = systemUpgradeControllerManifestUrl();
    this.installer = new command.local.Command(
      `${name}-install-controller`,
      {
        create: `node ${scriptEntryPoints.installSystemUpgradeController}`,
        dir: localCommandDir(),
        environment: pulumi.secret(
          pulumi.output(args.managementKubeconfig).apply((kubeconfig) => ({
            MANAGEMENT_KUBECONFIG: kubeconfig,
            MANIFEST_URL: manifestUrl,
            WAIT_FOR_CRD: systemUpgrade.planCrd,
            WAIT_SECONDS: String(args.installWaitSeconds ?? 600),
          })),
        ),
        // A new pinned release replaces the command, which applies the new manifest over the old.
        triggers: [catalog.systemUpgradeController.version, manifestUrl],
        logging: command.local.Logging.Stderr,
      },
      { parent: this, dependsOn: upstreamOf(opts) },
    );
    this.serverPlan = new k8s.apiextensions.CustomResource(`${name}-server-plan`, k3sServerPlan(args.k3sVersion) as k8s.apiextensions.CustomResourceArgs, {
      parent: this,
      dependsOn: [this.installer],
    });
    // The policy pack's stack rules read the target here (infra/model/contract/policy-facts.ts).
    this.registerOutputs({ [componentOutputs.k3sTarget]: args.k3sVersion });
  }
}
