/**
 * The version catalog: every version the fleet pins, and the compatibility facts that
 * config validation, the components and the policy pack check against. Pure data and
 * types: no Pulumi import, because `policies/` shares this module. No other file may
 * contain a version literal (tests/repo/repo-guards.test.ts enforces it).
 *
 * Why this set (checked against the sources cited per entry):
 * - CAPI v1.12.x: CAREN v0.45–v0.50 is built on it (and untested on v1.13); CAPH v1.1.x
 *   supports up to v1.13 and needs v1beta1 served (gone in v1.16); Kubernetes patches above
 *   1.33.11/1.34.7/1.35.4 need ≥ v1.12.8. v1.12.10 rather than v1.12.11 because the Go module
 *   proxy (where tests read the upstream CRDs) serves v1.12.10 and refuses v1.12.11.
 * - CAPH v1.1.8, CAAPH v0.6.4 (the version CAREN tests with), CAREN v0.50.0: newest releases.
 * - cluster-api-operator 0.28.0: built on the same CAPI v1.12.10 library, so it resolves
 *   provider names and contracts exactly like the CAPI it installs (0.29.0 moved to v1.13).
 * - Tenants run 1.33–1.35: the intersection of the CAPI and CAPH workload ranges, CAREN's
 *   tested minors and the Cilium CAREN ships (1.19; Kubernetes 1.36 needs Cilium 1.20).
 */

/** An inclusive range of Kubernetes minors, written "1.31". */
export interface MinorRange {
  readonly min: string;
  readonly max: string;
}

/** An inclusive range of release versions of one project, written "v1.10" (minor) or "v1.12.0". */
export interface ReleaseRange {
  readonly min: string;
  readonly max: string;
}

/**
 * A Helm chart pinned by version. `repository` is an https:// chart repository or an
 * oci:// registry path (the chart reference is then `<repository>/<chart>`).
 */
export interface HelmChartPin {
  readonly chart: string;
  readonly repository: string;
  readonly version: string;
}

export const catalog = {
  /** k3s for the management cluster (installed by cloud-init with INSTALL_K3S_VERSION; later versions reach running servers through the system-upgrade-controller). */
  k3s: {
    /** k3s-io/k3s releases: the newest 1.34 patch at the time of pinning. */
    version: "v1.34.6+k3s1",
  },
  /**
   * rancher/system-upgrade-controller: upgrades k3s on the running management servers from
   * Plans. The newest release tag (v0.20.1, 2026-05-19); the program applies its release asset
   * `system-upgrade-controller.yaml` (scripts/package-controller: `kustomize build` of the
   * repository's kustomization at the tag). The controller registers the Plan CRD itself at
   * startup (pkg/upgrade/controller.go, registerCRD).
   */
  systemUpgradeController: {
    version: "v0.20.1",
  },
  /** hcloud image of the management servers (k3s supports it; cloud-init is preinstalled). */
  managementImage: "ubuntu-24.04",
  /**
   * Default hcloud image of tenant nodes: a stock image; the ClusterClass installs containerd
   * and the kubelet/kubeadm of each node's own version at boot (pkgs.k8s.io).
   */
  tenantNodeImage: "ubuntu-24.04",

  /**
   * containerd on tenant nodes, installed from its release bundle (cri-containerd-cni, with
   * its .sha256sum) by infra/model/platform/shell/install-kubernetes.sh. The version CAPH's own
   * ClusterClass pins (syself/cluster-api-provider-hetzner@v1.1.8:
   * templates/cluster-templates/v1beta1/cluster-class.yaml, `export CONTAINERD=1.7.26`).
   * 1.x because CAREN's containerd patches target the 1.x config layout; Kubernetes 1.35 is
   * the last minor that supports containerd 1.x, so a 1.36 tenant needs containerd 2 first.
   */
  containerd: {
    version: "1.7.26",
    /** The newest Kubernetes minor that still supports containerd 1.x. */
    lastKubernetesMinorForV1: "1.35",
  },

  /** cert-manager: issues the webhook certificates of CAPI, the operator and CAREN. */
  certManager: {
    /**
     * cert-manager/cert-manager releases; charts.jetstack.io versions keep the leading v. The tag
     * exists: the Go module proxy serves github.com/cert-manager/cert-manager@v1.21.2 (2026-09-10),
     * read at test time with its deploy/charts/cert-manager (infra/model/versions/catalog-upstream.test.ts).
     */
    chart: { chart: "cert-manager", repository: "https://charts.jetstack.io", version: "v1.21.2" },
    /** cert-manager/website: content/docs/releases/README.md (v1.21 row: 1.33 → 1.36). */
    kubernetes: { min: "1.33", max: "1.36" } satisfies MinorRange,
  },

  /** cluster-api-operator (CAPIO): installs the CAPI providers from provider CRs. */
  clusterApiOperator: {
    /** kubernetes-sigs/cluster-api-operator@v0.28.0: chart versions have no leading v. */
    chart: {
      chart: "cluster-api-operator",
      repository: "https://kubernetes-sigs.github.io/cluster-api-operator",
      version: "0.28.0",
    },
    /** The released chart's `image.manager.repository`: its Makefile's PROD_REGISTRY and IMAGE_NAME (release target). */
    image: "registry.k8s.io/capi-operator/cluster-api-operator",
  },

  /** Cluster API core, kubeadm bootstrap and kubeadm control-plane providers. */
  clusterApi: {
    version: "v1.12.10",
    /**
     * The CAPI release whose support table the two ranges below come from:
     * sigs.k8s.io/cluster-api@v1.14.0: docs/book/src/reference/versions.md, core provider table,
     * "v1.12" column: 1.29–1.30 workload only, 1.31–1.35, and "Kubernetes v1.36 | ✓ >= v1.12.8".
     * The copy in the pinned v1.12.10 tree stops at 1.35 (release-1.12 never got the 1.36 row,
     * which main added); infra/model/versions/catalog-upstream.test.ts reads both copies.
     */
    supportTableRelease: "v1.14.0",
    /** That table's management clusters for the pinned patch (1.36 because v1.12.10 ≥ v1.12.8). */
    managementKubernetes: { min: "1.31", max: "1.36" } satisfies MinorRange,
    /** Same table, workload clusters. */
    workloadKubernetes: { min: "1.29", max: "1.36" } satisfies MinorRange,
    /** First release with chained upgrades (ClusterClass `kubernetesVersions`). */
    chainedUpgradesSince: "v1.12.0",
    /** Contracts the pinned CAPI serves (v1beta1 is deprecated, removed in v1.16). */
    servedContracts: ["v1beta1", "v1beta2"],
    /** CAPI issue #11920: v1beta1 is no longer served from this release on. */
    v1beta1RemovedIn: "v1.16.0",
    /** The release's manager images, tagged with the version (sigs.k8s.io/cluster-api@v1.12.10: Makefile, PROD_REGISTRY and *_IMAGE_NAME). */
    images: {
      core: "registry.k8s.io/cluster-api/cluster-api-controller",
      kubeadmBootstrap: "registry.k8s.io/cluster-api/kubeadm-bootstrap-controller",
      kubeadmControlPlane: "registry.k8s.io/cluster-api/kubeadm-control-plane-controller",
    },
  },

  /**
   * Kubernetes patches newer than these need the ClusterRole `system:kubelet-api-admin`,
   * which only CAPI ≥ v1.11.11 / ≥ v1.12.8 / ≥ v1.13.2 creates
   * (syself/cluster-api-provider-hetzner@v1.1.8: docs compatibility notes).
   */
  kubeletApiAdminRule: {
    lastPatchWithout: { "1.33": 11, "1.34": 7, "1.35": 4, "1.36": 0 } as Readonly<Record<string, number>>,
    minimumClusterApi: { "1.11": "v1.11.11", "1.12": "v1.12.8", "1.13": "v1.13.2" } as Readonly<Record<string, string>>,
  },

  /** Cluster API Provider Hetzner. */
  caph: {
    version: "v1.1.8",
    /** syself/cluster-api-provider-hetzner@v1.1.8: docs/caph/01-getting-started/01-introduction.md. */
    workloadKubernetes: { min: "1.32", max: "1.36" } satisfies MinorRange,
    /** Same document: CAPI v1.10–v1.13 supported (v1.14 not listed). */
    clusterApi: { min: "v1.10", max: "v1.13" } satisfies ReleaseRange,
    /** CAPH v1.1.x speaks only the v1beta1 contract (`metadata.yaml`). */
    contract: "v1beta1",
    /** CAPH releases that speak only v1beta1, so they need a CAPI that still serves it (semver range). */
    v1beta1OnlyReleases: "<1.2.0",
    /**
     * The release's manager image, tagged with the version: its Makefile's `release` target sets
     * `$(IMAGE_PREFIX)/$(INFRA_SHORT)` = ghcr.io/syself/caph. A reading of the source store's
     * snapshot of the repository (the Go module proxy refuses the module; the data copy has no Makefile).
     */
    image: "ghcr.io/syself/caph",
  },

  /** Cluster API Add-on Provider Helm (HelmChartProxy), used by CAREN's HelmAddon strategy. */
  caaph: {
    /** nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: hack/third-party/caaph/go.mod. */
    version: "v0.6.4",
    /** The release's manager image, tagged with the version (sigs.k8s.io/cluster-api-addon-provider-helm@v0.6.4: Makefile, PROD_REGISTRY and IMAGE_NAME). */
    image: "registry.k8s.io/cluster-api-helm/cluster-api-helm-controller",
  },

  /** Cluster API Runtime Extensions Nutanix. */
  caren: {
    /** The chart lives in a classic Helm repository on GitHub Pages; versions keep the leading v. */
    chart: {
      chart: "cluster-api-runtime-extensions-nutanix",
      repository: "https://nutanix-cloud-native.github.io/cluster-api-runtime-extensions-nutanix/helm",
      version: "v0.50.0",
    },
    /** The chart's `image.repository` (charts/cluster-api-runtime-extensions-nutanix/values.yaml). */
    image: "ghcr.io/nutanix-cloud-native/cluster-api-runtime-extensions-nutanix",
    /** CAREN v0.45+ serves v1beta2 ClusterClass patches and is built on CAPI v1.12 (go.mod v1.12.5). */
    minimumClusterApi: "v1.12.0",
    /** The first CAREN release that needs `minimumClusterApi`. */
    minimumClusterApiSince: "v0.45.0",
    /**
     * Node images CAREN v0.50.0 runs its e2e suite on (hack/ e2e kind config); other
     * minors are advisory-only in the policy pack.
     */
    testedKubernetes: ["v1.33.10", "v1.34.6", "v1.35.3"],
    /**
     * Which GeneratePatches generation (`…v<N>configpatch-gp`) each CAREN release registers
     * (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix: `pkg/handlers/<p>/mutation/metapatch_handler.go`
     * at each release tag).
     * Releases outside these semver ranges were not checked, so they are refused, not guessed.
     */
    patchGenerations: [
      { releases: ">=0.33.0 <0.34.0", current: 4, previous: 3 },
      { releases: ">=0.40.0 <=0.41.8", current: 5, previous: 4 },
      { releases: ">=0.45.0 <=0.50.0", current: 6, previous: 5 },
    ],
  },

  /**
   * Cilium, the tenants' CNI, installed by CAREN's lifecycle hooks at the fleet's version: the
   * program writes it into CAREN's helm-addons ConfigMap (components/caren), which CAREN's Cilium
   * handler reads at every hook. 1.19.4 is also what CAREN v0.50.0 ships
   * (charts/cluster-api-runtime-extensions-nutanix/templates/helm-config.yaml); bumping it here
   * is the fleet-wide Cilium upgrade (docs/operations.md).
   */
  cilium: {
    version: "1.19.4",
    /** The chart and its repository (helm.cilium.io, as CAREN's entry names it without its in-cluster mirror). */
    chart: "cilium",
    repository: "https://helm.cilium.io/",
    /** docs.cilium.io v1.19: network/kubernetes/compatibility (tested Kubernetes versions). */
    kubernetes: { min: "1.32", max: "1.35" } satisfies MinorRange,
  },

  /**
   * Hetzner Cloud controller manager: node initialisation and LoadBalancer Services. Must be
   * ≥ v1.30.1: older releases break on Hetzner's API change of 2026-07-01.
   */
  hcloudCloudControllerManager: {
    /**
     * The newest release confirmed (chart versions have no v): tag v1.35.0 (2026-08-11) with
     * hetznercloud/hcloud-cloud-controller-manager@v1.35.0: chart/Chart.yaml `version: 1.35.0` and
     * CHANGELOG.md "v1.35.0". A reading of the source store's snapshot (main at 2026-08-19; v1.36.0
     * was only a pending release branch, no 1.37.0 anywhere); the Go module proxy refuses the module.
     */
    chart: { chart: "hcloud-cloud-controller-manager", repository: "https://charts.hetzner.cloud", version: "1.35.0" },
    /** The first release that works after Hetzner's API change of 2026-07-01. */
    minimumVersion: "1.30.1",
    /**
     * hetznercloud/hcloud-cloud-controller-manager@v1.35.0: docs/reference/version-policy.md lists
     * 1.33–1.36 for the latest release (1.32 only up to v1.30.1); "feat: support kubernetes v1.36.0
     * (#1217)" made that change, in every tag from v1.31.0 on. A reading, as above.
     */
    kubernetes: { min: "1.33", max: "1.36" } satisfies MinorRange,
  },

  /** Hetzner Cloud CSI driver (tenants' volumes). */
  hcloudCsi: {
    /**
     * The newest release confirmed (chart versions have no v): tag v2.22.1 (2026-07-30) with
     * hetznercloud/csi-driver@v2.22.1: chart/Chart.yaml `version: 2.22.1` and CHANGELOG.md "v2.22.1".
     * A reading of the source store's snapshot (main at 2026-08-21, no 2.23.0 anywhere); the Go
     * module proxy refuses the module.
     */
    chart: { chart: "hcloud-csi", repository: "https://charts.hetzner.cloud", version: "2.22.1" },
    /**
     * hetznercloud/csi-driver@v2.22.1: docs/kubernetes/reference/version-policy.md, 1.33–1.36
     * "v2.20.2+" (PR #1354 added 1.36, dropped 1.32). A reading, as above.
     */
    kubernetes: { min: "1.33", max: "1.36" } satisfies MinorRange,
  },

  /**
   * The Kubernetes cluster autoscaler (clusterapi provider), one per tenant with an autoscaled
   * pool, run by the program on the management cluster (components/cluster-autoscaler).
   */
  clusterAutoscaler: {
    /**
     * kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0 (2026-07-21, the newest chart tag
     * read): cluster-autoscaler/charts/cluster-autoscaler/Chart.yaml (versions have no v).
     */
    chart: { chart: "cluster-autoscaler", repository: "https://kubernetes.github.io/autoscaler", version: "9.59.0" },
    /**
     * Image tag per tenant Kubernetes minor: the autoscaler's minor must match the cluster's
     * (kubernetes/autoscaler: cluster-autoscaler/README.md, "Releases"). Newest patch tag of each
     * release branch read (cluster-autoscaler-1.33.6, -1.34.5, -1.35.2, all tagged 2026-07-22);
     * the image is registry.k8s.io/autoscaling/cluster-autoscaler (the chart's `image.repository`).
     */
    imageTagByMinor: { "1.33": "v1.33.6", "1.34": "v1.34.5", "1.35": "v1.35.2" } as Readonly<Record<string, string>>,
    /** The chart's `image.repository` (a reading of its values.yaml at that chart tag). */
    image: "registry.k8s.io/autoscaling/cluster-autoscaler",
  },

  /**
   * Karpenter's Cluster API provider (kubernetes-sigs/karpenter-provider-cluster-api),
   * EXPERIMENTAL: one per tenant with a Karpenter pool, run by the program on the management
   * cluster (components/karpenter). Release tag v0.2.0 (2025-10-28, commit 9be2dd2d), the newest
   * release read; the repository publishes no image a user can pull and no chart repository
   * (its chart, charts/karpenter 0.1.0, names a local image), so the image is a stack setting
   * (`karpenter.image`). The Go module proxy refuses the module.
   */
  karpenterClusterApi: {
    version: "v0.2.0",
    commit: "9be2dd2dafc7b57e6bb3a8341e650a04145c3e1d",
    /**
     * sigs.k8s.io/karpenter as the provider's go.mod at that tag requires it: the NodePool and
     * NodeClaim API (karpenter.sh/v1), served by the Go module proxy. Its own CRDs are not the
     * ones to install: their NodeClaim rule refuses the provider's requirement label; the tag's
     * charts/karpenter/crds are (tests/in-the-loop/karpenter-in-the-loop.test.ts shows both).
     */
    karpenterVersion: "v1.4.0",
  },

  /** Flux, installed by the Flux Operator from a FluxInstance. */
  flux: {
    /** controlplaneio-fluxcd/flux-operator releases; the OCI chart's versions have no leading v. */
    operatorChart: {
      chart: "flux-operator",
      repository: "oci://ghcr.io/controlplaneio-fluxcd/charts",
      version: "0.59.0",
    },
    /**
     * The operator chart's `image.repository`: a reading of controlplaneio-fluxcd/charts,
     * charts/flux-operator/values.yaml (the source store's snapshot; no module carries the chart).
     */
    operatorImage: "ghcr.io/controlplaneio-fluxcd/flux-operator",
    /** FluxInstance `spec.distribution.registry`: where Flux's controller images come from (the CRD's example and the operator's default). */
    registry: "ghcr.io/fluxcd",
    /**
     * FluxInstance `spec.distribution.version`: an exact release, so a Flux upgrade is a
     * reviewed one-line change here rather than something the operator does on its own.
     * Operator v0.59.0 bundles distributions up to 2.9.5 (flux-operator@v0.59.0:
     * config/data/flux/); 2.9.4 is the one whose controllers the tests build and run
     * (docs/architecture.md, "GitOps on the management cluster", says what 2.9.5 would take).
     */
    distribution: "2.9.4",
    /**
     * The controllers that distribution ships, which tests/in-the-loop/flux-in-the-loop.test.ts builds from
     * the Go module proxy and runs (image tags in flux-operator@v0.59.0:
     * config/data/flux/v2.9.4/{source,kustomize}-controller.yaml; a test compares them).
     */
    controllers: { sourceController: "v1.9.4", kustomizeController: "v1.9.4" },
    /** fluxcd/flux2 v2.9.0 release notes: Kubernetes 1.34 (≥ 1.34.1), 1.35 and 1.36. */
    kubernetes: { min: "1.34", max: "1.36" } satisfies MinorRange,
  },

  /**
   * Versions a tenant may run; the ClusterClass publishes exactly these as
   * `spec.kubernetesVersions` (one patch per minor, no gaps) so CAPI can chain upgrades.
   * The intersection of the CAPI and CAPH workload ranges with CAREN's tested minors;
   * 1.36 is left out because CAREN v0.50.0 ships Cilium 1.19, below the 1.20 that
   * Kubernetes 1.36 needs.
   */
  tenantKubernetesVersions: ["v1.33.10", "v1.34.6", "v1.35.3"],

  /** Hetzner Cloud names the config is checked against without calling Hetzner's API. */
  hcloud: {
    /**
     * The locations CAPH accepts (its CRDs refuse others) and the network zone of each
     * (syself/cluster-api-provider-hetzner@v1.1.8: api/v1beta1/types.go `Region` enum and
     * api/v1beta1/hetznercluster_webhook.go `regionNetworkZoneMap`).
     */
    networkZoneOfLocation: { fsn1: "eu-central", nbg1: "eu-central", hel1: "eu-central", ash: "us-east", hil: "us-west", sin: "ap-southeast" },
    /**
     * Server types Hetzner lists (docs.hetzner.com/cloud/servers/overview, `hcloud server-type
     * list`), checked by hand when this release was pinned: cost-optimised cx, AMD cpx (both
     * generations), Arm cax, dedicated ccx. Hetzner changes the list and CAPH no longer checks
     * it (same CAPH release: api/v1beta1/hcloudmachine_types.go, `Type`), so a type outside it
     * is a warning, not an error: it cannot be known offline.
     */
    serverTypes: [
      "cx23", "cx33", "cx43", "cx53",
      "cpx11", "cpx21", "cpx31", "cpx41", "cpx51",
      "cpx12", "cpx22", "cpx32", "cpx42", "cpx52", "cpx62",
      "cax11", "cax21", "cax31", "cax41",
      "ccx13", "ccx23", "ccx33", "ccx43", "ccx53", "ccx63",
    ],
    /**
     * vCPUs and memory (GiB) of the server types whose size was read from Hetzner's server-type
     * list (docs.hetzner.com/cloud/servers/overview), for the capacity annotations a Karpenter
     * pool's MachineDeployment needs before a server exists (platform/karpenter.ts). The newer
     * cpx12–cpx62 generation is left out until its sizes are read from the same list.
     */
    serverTypeCapacity: {
      cx23: { cpu: 2, memoryGi: 4 }, cx33: { cpu: 4, memoryGi: 8 }, cx43: { cpu: 8, memoryGi: 16 }, cx53: { cpu: 16, memoryGi: 32 },
      cpx11: { cpu: 2, memoryGi: 2 }, cpx21: { cpu: 3, memoryGi: 4 }, cpx31: { cpu: 4, memoryGi: 8 }, cpx41: { cpu: 8, memoryGi: 16 }, cpx51: { cpu: 16, memoryGi: 32 },
      cax11: { cpu: 2, memoryGi: 4 }, cax21: { cpu: 4, memoryGi: 8 }, cax31: { cpu: 8, memoryGi: 16 }, cax41: { cpu: 16, memoryGi: 32 },
      ccx13: { cpu: 2, memoryGi: 8 }, ccx23: { cpu: 4, memoryGi: 16 }, ccx33: { cpu: 8, memoryGi: 32 }, ccx43: { cpu: 16, memoryGi: 64 }, ccx53: { cpu: 32, memoryGi: 128 }, ccx63: { cpu: 48, memoryGi: 192 },
    } as Readonly<Record<string, { readonly cpu: number; readonly memoryGi: number }>>,
    /**
     * Hetzner system images the servers are known to boot with this fleet's cloud-init and node
     * install script. Anything else may be a snapshot or a CAPH image label
     * (api/v1beta1/hcloudmachine_types.go, `ImageName`: an image's name or its label), which
     * only Hetzner's API knows, so it is a warning.
     */
    systemImages: ["ubuntu-24.04", "ubuntu-22.04", "debian-12"],
    /**
     * Locations with Hetzner Object Storage, each served at `<location>.your-objectstorage.com`
     * (docs.hetzner.com/storage/object-storage/overview, "Available endpoints"); the management
     * cluster's etcd snapshots go there.
     */
    objectStorageLocations: ["fsn1", "nbg1", "hel1"],
  },
} as const;

export type Catalog = typeof catalog;
