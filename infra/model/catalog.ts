/**
 * The version catalog: every version the fleet pins, and the compatibility facts that
 * config validation and the policy pack check against. Pure data and types: no Pulumi
 * import, because `policies/` shares this module.
 *
 * Why this set (see ../shared/upstream-facts.md §1.4): CAREN v0.45–v0.50 is built on
 * CAPI v1.12; CAPH v1.1.x supports CAPI up to v1.13 and needs v1beta1 to be served
 * (gone in CAPI v1.16); Kubernetes patches above 1.33.11/1.34.7/1.35.4 need CAPI
 * ≥ v1.12.8. So: CAPI v1.12.x, CAPH v1.1.8, CAREN v0.50.0. The CAPI patch is v1.12.10, not
 * v1.12.11: the Go module proxy (where tests read upstream CRDs) serves v1.12.8 and v1.12.10
 * but refuses v1.12.11.
 */

/** An inclusive range of Kubernetes minors, written "1.31". */
export interface MinorRange {
  readonly min: string;
  readonly max: string;
}

export const catalog = {
  /** Cluster API core and kubeadm providers. */
  clusterApi: {
    version: "v1.12.10",
    /** sigs.k8s.io/cluster-api@main: docs/book/src/reference/versions.md (v1.12.x row). */
    managementKubernetes: { min: "1.31", max: "1.36" } satisfies MinorRange,
    /** Same table, workload column. */
    workloadKubernetes: { min: "1.29", max: "1.36" } satisfies MinorRange,
  },
  /** Cluster API Provider Hetzner. */
  caph: {
    version: "v1.1.8",
    /** syself/cluster-api-provider-hetzner@v1.1.8: docs/caph/01-getting-started/01-introduction.md. */
    workloadKubernetes: { min: "1.32", max: "1.36" } satisfies MinorRange,
  },
  /** Cluster API Runtime Extensions Nutanix. */
  caren: {
    version: "v0.50.0",
    /**
     * Node images CAREN v0.50.0 runs its e2e suite on (hack/ e2e kind config); other
     * minors are advisory-only in the policy pack.
     */
    testedKubernetes: ["v1.33.10", "v1.34.6", "v1.35.3"],
  },
  /** k3s for the management cluster (installed by cloud-init with INSTALL_K3S_VERSION). */
  k3s: {
    version: "v1.34.6+k3s1",
  },
  /** hcloud image of the management servers (k3s supports it; cloud-init is preinstalled). */
  managementImage: "ubuntu-24.04",
  /**
   * Versions a tenant may run; the ClusterClass publishes exactly these as
   * `spec.kubernetesVersions` (one patch per minor, no gaps) so CAPI can chain upgrades.
   * The intersection of the CAPI and CAPH workload ranges with CAREN's tested minors;
   * 1.36 is left out because CAREN v0.50.0 ships Cilium 1.19, below the 1.20 that
   * Kubernetes 1.36 needs.
   */
  tenantKubernetesVersions: ["v1.33.10", "v1.34.6", "v1.35.3"],
} as const;

export type Catalog = typeof catalog;
