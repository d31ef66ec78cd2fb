import { catalog } from "../versions/catalog";
import { parseK3sVersion, type KubernetesVersion } from "../versions/kubernetes-version";
import { platformNamespaces } from "../platform/platform-namespaces";

/**
 * In-place k3s upgrades of the management servers through rancher/system-upgrade-controller
 * (SUC): the program installs SUC from its pinned release and declares a Plan whose
 * `spec.version` is `management.k3sVersion`, so a version change is a Plan diff in the preview.
 * Pure, so the program, the policy pack and the tests agree.
 */

/**
 * Names fixed by SUC's release manifest (rancher/system-upgrade-controller@v0.20.1:
 * kustomization.yaml `namespace: system-upgrade`; manifests/system-upgrade-controller.yaml,
 * ServiceAccount `system-upgrade`, bound to the drainer ClusterRole by
 * manifests/clusterrolebinding.yaml). Plans live in the controller's namespace.
 */
export const systemUpgrade = {
  namespace: platformNamespaces.systemUpgrade,
  serviceAccount: "system-upgrade",
  /** The CRD the controller registers at startup (pkg/crds/yaml/generated/upgrade.cattle.io_plans.yaml). */
  planCrd: "plans.upgrade.cattle.io",
  apiVersion: "upgrade.cattle.io/v1",
  /** The image whose tag SUC sets to the Plan's version, `+` becoming `-` (pkg/upgrade/plan/plan.go, MungeVersion; pkg/upgrade/container/container.go, WithLatestTag); k3s-io/k3s-upgrade publishes one per k3s release. */
  k3sUpgradeImage: "rancher/k3s-upgrade",
  /** The server Plan's name; it is also the node label SUC records progress in (`plan.upgrade.cattle.io/<name>`). */
  serverPlanName: "k3s-server",
} as const;

/** The release asset the installer applies: SUC's namespace, RBAC, ConfigMap and Deployment at the pinned tag. */
export function systemUpgradeControllerManifestUrl(version: string = catalog.systemUpgradeController.version): string {
  return `https://github.com/rancher/system-upgrade-controller/releases/download/${version}/system-upgrade-controller.yaml`;
}

/**
 * What a server's upgrade job needs after its drain: pulling rancher/k3s-upgrade (SUC's manifest
 * pulls Always), swapping the binary and k3s' restart.
 */
export const k3sUpgradeAllowanceSeconds = 10 * 60;

/** How long one drain may wait for evictions (kubectl drain --timeout). */
const drainTimeoutMinutes = 15;

/**
 * The Plan that upgrades every k3s server, one at a time (`concurrency: 1`), each cordoned
 * and drained first. Fields from rancher/system-upgrade-controller@v0.20.1:
 * pkg/apis/upgrade.cattle.io/v1/types.go (PlanSpec, DrainSpec). The job's upgrade container
 * (k3s-io/k3s-upgrade: scripts/upgrade.sh) finds the running k3s process, replaces the binary
 * it was started from (/usr/local/bin/k3s, where get.k3s.io put it with INSTALL_K3S_VERSION),
 * and sends SIGTERM, so systemd restarts k3s on the new binary; a binary that already matches
 * is left alone. The management cluster has no agents, so there is no agent Plan.
 */
export function k3sServerPlan(version: string): Record<string, unknown> {
  return {
    apiVersion: systemUpgrade.apiVersion,
    kind: "Plan",
    metadata: { name: systemUpgrade.serverPlanName, namespace: systemUpgrade.namespace },
    spec: {
      concurrency: 1,
      version,
      // k3s labels every server node-role.kubernetes.io/control-plane=true, agents get no role label
      // (k3s-io/k3s: pkg/server/server.go, setNodeLabelsAndAnnotations).
      nodeSelector: { matchExpressions: [{ key: "node-role.kubernetes.io/control-plane", operator: "In", values: ["true"] }] },
      serviceAccountName: systemUpgrade.serviceAccount,
      // The servers' taints (k3s' CriticalAddonsOnly when set, control-plane NoSchedule).
      tolerations: [
        { key: "CriticalAddonsOnly", operator: "Exists" },
        { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
      ],
      cordon: true,
      drain: {
        // kubectl drain flags: DaemonSet pods stay, emptyDir pods go; bounded so a
        // PodDisruptionBudget cannot hold the upgrade forever (the job fails and SUC retries it).
        ignoreDaemonSets: true,
        deleteEmptydirData: true,
        timeout: `${drainTimeoutMinutes}m`,
        skipWaitForDeleteTimeout: 60,
      },
      // The drain is an init container of the upgrade's Job, so the Job's deadline covers both; the
      // controller's default (900 s in SUC's manifest) would leave nothing after a full drain
      // (rancher/system-upgrade-controller@v0.20.1: pkg/upgrade/job/job.go, manifests/system-upgrade-controller.yaml).
      jobActiveDeadlineSecs: drainTimeoutMinutes * 60 + k3sUpgradeAllowanceSeconds,
      upgrade: { image: systemUpgrade.k3sUpgradeImage },
    },
  };
}

/** Orders k3s releases: version, then the k3s revision (v1.34.6+k3s2 is newer than +k3s1). */
function compareK3s(a: KubernetesVersion, b: KubernetesVersion): number {
  // Stryker disable next-line Regex: equivalent, the build is always k3sN (parseK3sVersion)
  const revision = (version: KubernetesVersion) => Number(version.build?.replace(/^k3s/, "") ?? 0);
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || revision(a) - revision(b);
}

/**
 * Why the servers cannot go from the deployed k3s release to the target, or undefined when
 * they can (also when nothing was deployed yet, or the target is what runs). k3s upgrades one
 * minor at a time and never down: "Ensure that your plan does not skip intermediate minor
 * versions when upgrading. The system-upgrade-controller itself will not protect against
 * unsupported changes to the Kubernetes version" (docs.k3s.io/upgrades/manual). The target's
 * range is management-kubernetes-version's concern.
 */
export function k3sUpgradeProblem(deployed: string | undefined, target: string): string | undefined {
  if (deployed === undefined || deployed === target) return undefined;
  const from = parseK3sVersion(deployed);
  const to = parseK3sVersion(target);
  if (!from) return `the deployed version ${JSON.stringify(deployed)} recorded in the stack outputs is not a k3s release`;
  if (!to) return undefined; // the config schema and management-kubernetes-version report the target itself
  // Stryker disable next-line EqualityOperator: equivalent, two different release texts are two different releases (parseK3sVersion)
  if (compareK3s(to, from) < 0) {
    return `${target} would downgrade the servers from the deployed ${deployed}; k3s is never downgraded in place`;
  }
  const minorsCrossed = (to.major - from.major) * 1000 + (to.minor - from.minor);
  if (minorsCrossed > 1) {
    return `${deployed} → ${target} skips ${minorsCrossed - 1} minor${minorsCrossed > 2 ? "s" : ""}; k3s upgrades one minor at a time: set v${from.major}.${from.minor + 1}.x first`;
  }
  return undefined;
}

/** The deployed k3s version in a previous `managementK3sVersion` output (undefined: none, or not a k3s release). */
export function deployedK3sVersionFrom(output: unknown): { version: string | undefined; ignored: boolean } {
  if (output === undefined || output === null) return { version: undefined, ignored: false };
  return typeof output === "string" && parseK3sVersion(output) ? { version: output, ignored: false } : { version: undefined, ignored: true };
}
