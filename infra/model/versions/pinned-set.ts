import semver from "semver";
import { catalog, type Catalog } from "./catalog";
import { describeRange } from "./kubernetes-version";
import { carenPatchGeneration } from "./compatibility";

/** One row of the pinned set, for docs/platform.md and release notes. */
export interface CatalogRow {
  readonly component: string;
  readonly version: string;
  readonly why: string;
}

/** The pinned set with one line of reasoning each, rendered from the catalog. */
export function catalogSummary(c: Catalog = catalog): CatalogRow[] {
  // The kubelet-api-admin minimum of the pinned CAPI's own release line; none to cite when the table lacks the line.
  const kubeletApiAdminMinimum = c.kubeletApiAdminRule.minimumClusterApi[`${semver.major(c.clusterApi.version)}.${semver.minor(c.clusterApi.version)}`];
  const kubeletApiAdminClause = kubeletApiAdminMinimum === undefined ? "" : `; ≥ ${kubeletApiAdminMinimum} for the kubelet-api-admin patches`;
  return [
    { component: "k3s (management)", version: c.k3s.version, why: `the Kubernetes patch CAREN tests on; 1.34 suits CAPI, cert-manager, Flux (${describeRange(c.flux.kubernetes)}) and the CCM` },
    { component: "system-upgrade-controller", version: c.systemUpgradeController.version, why: "newest release; upgrades the management servers' k3s in place from a Plan" },
    { component: "cert-manager chart", version: c.certManager.chart.version, why: `newest release; supports Kubernetes ${describeRange(c.certManager.kubernetes)}` },
    { component: "cluster-api-operator chart", version: c.clusterApiOperator.chart.version, why: `built on CAPI ${c.clusterApi.version}, the CAPI it installs` },
    { component: "CAPI core + kubeadm", version: c.clusterApi.version, why: `CAREN is built on v1.12 and CAPH supports ≤ ${c.caph.clusterApi.max}${kubeletApiAdminClause}; newest patch the Go proxy serves` },
    { component: "CAPH", version: c.caph.version, why: `newest release; CAPI ${c.caph.clusterApi.min}–${c.caph.clusterApi.max}, Kubernetes ${describeRange(c.caph.workloadKubernetes)}` },
    { component: "CAAPH", version: c.caaph.version, why: "the version CAREN's own tests use" },
    { component: "CAREN chart", version: c.caren.chart.version, why: `newest release; needs CAPI ≥ ${c.caren.minimumClusterApi}; handlers v${carenPatchGeneration(c.caren.chart.version)}` },
    { component: "Cilium (via CAREN)", version: c.cilium.version, why: `the fleet's pin, handed to CAREN's helm-addons ConfigMap; Kubernetes ${describeRange(c.cilium.kubernetes)}, which caps tenants below 1.36` },
    { component: "hcloud CCM chart", version: c.hcloudCloudControllerManager.chart.version, why: `newest release whose existence could be confirmed; anything older than ${c.hcloudCloudControllerManager.minimumVersion} breaks on Hetzner's July 2026 API change` },
    { component: "hcloud CSI chart", version: c.hcloudCsi.chart.version, why: `newest release whose existence could be confirmed; Kubernetes ${describeRange(c.hcloudCsi.kubernetes)}` },
    { component: "Flux Operator chart", version: c.flux.operatorChart.version, why: "newest release the Go proxy serves" },
    { component: "Flux distribution", version: c.flux.distribution, why: "newest Flux the operator bundles; exact, so upgrades are reviewed diffs" },
    { component: "containerd (tenant nodes)", version: c.containerd.version, why: `what CAPH's ClusterClass pins; 1.x for CAREN's containerd patches, which holds tenants at Kubernetes ≤ ${c.containerd.lastKubernetesMinorForV1}` },
    { component: "Tenant Kubernetes", version: c.tenantKubernetesVersions.join(", "), why: "CAPI ∩ CAPH ∩ Cilium ranges ∩ CAREN's tested versions; one patch per minor" },
  ];
}

/** The summary as a Markdown table. */
export function catalogSummaryMarkdown(c: Catalog = catalog): string {
  const rows = catalogSummary(c).map((row) => `| ${row.component} | \`${row.version}\` | ${row.why} |`);
  return ["| Component | Pinned | Why |", "| --- | --- | --- |", ...rows].join("\n");
}
