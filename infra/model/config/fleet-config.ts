import { isIP } from "node:net";
import { z } from "zod";
import { catalog } from "../versions/catalog";
import { parseCidr } from "./cidr";
import type { MinorRange } from "../versions/catalog";
import { describeConstraints, intersectRanges, managementKubernetesConstraints, type KubernetesConstraint } from "../versions/compatibility";
import { cronScheduleProblem } from "./cron";
import { describeRange, isMinorInRange, parseK3sVersion, parseKubernetesVersion } from "../versions/kubernetes-version";
import { formatValue } from "./text";
import { hetznerLocations, loadBalancerTypes } from "../facts/hetzner";
import { carenPreflightChecks, carenPreflightSkipAnnotation, loadBalancerGcAnnotation } from "../facts/caren";

/**
 * Field-level schema of the fleet's stack config (`stacks/Pulumi.<stack>.yaml`).
 *
 * Every object is strict, so a typo is an error that names the key and suggests the
 * right one instead of a setting that silently does nothing. Messages name the value
 * and what is allowed; `validate-fleet-config.ts` adds the config key path in front.
 * Cross-field rules (unique names, overlapping CIDRs, secrets) live there too.
 */

/**
 * The management cluster's in-cluster networks: k3s' defaults, written out so k3s and the
 * overlap check with management.network.cidr use one value.
 */
export const k3sClusterNetworks = { pods: "10.42.0.0/16", services: "10.43.0.0/16" } as const;

export const cniStrategies = ["HelmAddon", "ClusterResourceSet"] as const;
export const reclaimPolicies = ["Delete", "Retain"] as const;

const allowedKeysPrefix = "allowed keys: ";

/**
 * A strict object whose unknown-key error lists the allowed keys; the formatter turns
 * it into one problem per unknown key, with a "did you mean" suggestion.
 */
function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    // Other issues (a non-mapping value) keep the generic message the formatter rewrites.
    // Stryker disable next-line ConditionalExpression: equivalent when always true, the formatter rewrites the only other issue (invalid_type) without its message
    error: (issue) => (issue.code === "unrecognized_keys" ? `${allowedKeysPrefix}${allowed}` : undefined),
  });
}

/** Splits an unknown-key issue message back into the allowed keys. */
export function allowedKeysFromMessage(message: string): string[] | undefined {
  return message.startsWith(allowedKeysPrefix) ? message.slice(allowedKeysPrefix.length).split(", ") : undefined;
}

/** Text ending in "allowed: a, b" for enum-like fields. */
function oneOf(values: readonly (string | number)[]): string {
  return `allowed: ${values.join(", ")}`;
}

/** A check's issue; its code and input are not shown (validate-fleet-config.ts shows the message). */
function customIssue(input: unknown, message: string) {
  // Stryker disable next-line StringLiteral: equivalent, validate-fleet-config.ts shows the message of every code it does not rewrite, "" too
  return { code: "custom" as const, input, message };
}

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function dnsLabel(maxLength = 63) {
  return z.string().check((ctx) => {
    const value = ctx.value;
    if (!dns1123Label.test(value) || value.length > maxLength) {
      ctx.issues.push(customIssue(value, `${formatValue(value)} is not a DNS-1123 label; ` +
          `allowed: lower-case letters, digits and '-', starting and ending with a letter or digit, at most ${maxLength} characters`));
    }
  });
}

const location = z.enum(hetznerLocations, {
  error: (issue) => `${formatValue(issue.input)} is not a Hetzner Cloud location; ${oneOf(hetznerLocations)}`,
});

/**
 * hcloud server types: cx/cpx (x86 shared), cax (Arm), ccx (dedicated), then digits
 * (syself/cluster-api-provider-hetzner@v1.1.8: api/v1beta1/hcloudmachine_types.go, `Type`).
 * Whether the type exists is checked against the catalog's list, as a warning.
 */
const serverTypePattern = /^(cx|cpx|cax|ccx)[0-9]{2,3}$/;
const serverType = z.string().check((ctx) => {
  if (!serverTypePattern.test(ctx.value)) {
    ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not an hcloud server type; allowed: cx*, cpx*, cax* or ccx* names such as cx23, cpx31, cax21`));
  }
});

function cidr(options: { privateIpv4?: boolean } = {}) {
  return z.string().check((ctx) => {
    const parsed = parseCidr(ctx.value);
    if (typeof parsed === "string") {
      ctx.issues.push(customIssue(ctx.value, parsed));
    } else if (options.privateIpv4 && parsed.family !== "ipv4") {
      ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not IPv4; allowed: an IPv4 range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16`));
    }
  });
}

/** Examples in messages come from the catalog, so no version is ever typed twice. */
const exampleKubernetesVersion: string = catalog.tenantKubernetesVersions[0];
const exampleK3sVersion: string = catalog.k3s.version;

/** Annotations the config owns through dedicated fields, with the field to use instead. */
const reservedAnnotations: Readonly<Record<string, string>> = {
  [loadBalancerGcAnnotation]: "loadBalancerGarbageCollection",
  [carenPreflightSkipAnnotation]: "carenPreflight.skip",
};

/** A Kubernetes annotation key: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters. */
const annotationKey = z.string().check((ctx) => {
  const key = ctx.value;
  const slash = key.lastIndexOf("/");
  const [prefix, name] = slash === -1 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  const nameOk = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(name);
  const prefixOk = prefix === undefined || (prefix.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix));
  const instead = reservedAnnotations[key];
  if (instead) {
    ctx.issues.push(customIssue(key, `${formatValue(key)} is set through the tenant field ${instead}; remove the annotation and set ${instead}`));
  } else if (!nameOk || !prefixOk) {
    ctx.issues.push(customIssue(key, `${formatValue(key)} is not an annotation key; allowed: [prefix/]name, the prefix a DNS subdomain, the name at most 63 letters, digits, '-', '_' or '.'`));
  }
});

const tenantKubernetesVersion = z.string().check((ctx) => {
  const allowed = catalog.tenantKubernetesVersions as readonly string[];
  if (allowed.includes(ctx.value)) {
    return;
  }
  const parsed = parseKubernetesVersion(ctx.value);
  const reason = parsed
    ? "is not in the ClusterClass kubernetesVersions of this release"
    : `is not a Kubernetes version of the form ${exampleKubernetesVersion}`;
  ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} ${reason}; ${oneOf(allowed)}`));
});

/**
 * The minors every constraint allows. Ranges that do not overlap are a catalog mistake, not a
 * config one (no version could ever be valid), so building the schema fails on them.
 */
export function overlappingRange(constraints: readonly KubernetesConstraint[]): MinorRange {
  const range = intersectRanges(constraints);
  if (!range) {
    throw new Error(`catalog.ts: the management platform's Kubernetes ranges do not overlap (${describeConstraints(constraints)})`);
  }
  return range;
}

/**
 * A management-cluster version check shared by k3s (hetzner) and existing clusters: the
 * minor must suit everything the platform installs there (compatibility.ts).
 */
function managementVersion(parse: typeof parseKubernetesVersion, example: string, mode: "hetzner" | "existing") {
  const constraints = managementKubernetesConstraints(mode);
  const range = overlappingRange(constraints);
  return z.string().check((ctx) => {
    const parsed = parse(ctx.value);
    if (!parsed) {
      ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not a version of the form ${example}`));
    } else if (!isMinorInRange(parsed, range)) {
      ctx.issues.push(
        customIssue(
          ctx.value,
          `${formatValue(ctx.value)} is outside what the management platform supports (${describeConstraints(constraints)}); ` +
            `allowed minors: ${describeRange(range)}`,
        ),
      );
    }
  });
}

/** The OpenSSH public key types the schema takes. */
export const sshKeyTypes = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa"];

/** An OpenSSH public key line; the blob must really encode the named key type. */
const sshPublicKey = z.string().check((ctx) => {
  const problem = sshPublicKeyProblem(ctx.value);
  if (problem) {
    // Stryker disable next-line StringLiteral: equivalent, a custom issue's input is never shown
    ctx.issues.push(customIssue("<ssh key>", problem));
  }
});

/** Explains why a string is not an OpenSSH public key, or returns undefined. */
export function sshPublicKeyProblem(text: string): string | undefined {
  if (text.includes("PRIVATE KEY")) {
    return "is a private key; give the public key (the .pub file) instead, and rotate this one";
  }
  // Stryker disable next-line StringLiteral: equivalent, split always yields a type, and a missing blob fails like any wrong one
  const [type = "", blob = ""] = text.trim().split(/\s+/);
  if (!sshKeyTypes.includes(type)) {
    return `is not an OpenSSH public key; allowed types: ${sshKeyTypes.join(", ")}`;
  }
  const bytes = Buffer.from(blob, "base64");
  // Stryker disable next-line EqualityOperator,UnaryOperator: equivalent, 4 bytes or fewer hold no type whatever length is read
  const declaredLength = bytes.length >= 4 ? bytes.readUInt32BE(0) : -1;
  const encodedType = bytes.subarray(4, 4 + declaredLength).toString("latin1");
  if (encodedType !== type) {
    return `is not a valid ${type} key: its base64 body is truncated or belongs to another key type`;
  }
  return undefined;
}

const gitUrl = z.string().check((ctx) => {
  const value = ctx.value;
  const scpLike = /^([\w.-]+@)?([\w.-]+):(?!\/\/)(.+)$/.exec(value);
  if (scpLike) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is an scp-style address, which Flux does not accept; use ssh://${scpLike[1] ?? ""}${scpLike[2]}/${scpLike[3]}`));
    return;
  }
  const url = URL.parse(value);
  if (!url || !["https:", "ssh:"].includes(url.protocol) || !url.hostname) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not a Git URL; allowed: https://… or ssh://…`));
  }
});

const repoPath = z.string().check((ctx) => {
  const value = ctx.value;
  if (value.startsWith("/") || value.split("/").includes("..") || value.length === 0) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not a path inside the repository; allowed: a relative path such as ./clusters/prod`));
  }
});

/** S3 bucket names as Hetzner Object Storage takes them (no dots: they break TLS on virtual-hosted URLs). */
const bucketName = z.string().check((ctx) => {
  if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(ctx.value)) {
    ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not a bucket name; allowed: 3 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit`));
  }
});

const objectStorageLocations = catalog.hcloud.objectStorageLocations;

/**
 * Scheduled k3s etcd snapshots, uploaded to Hetzner Object Storage. The servers read the
 * bucket, folder, endpoint and credentials from a Kubernetes Secret the program writes, at
 * every snapshot; schedule and retention are k3s flags (see etcd-snapshots.ts).
 */
const etcdBackupsSchema = strictObject({
  /** Object Storage location (endpoint `<location>.your-objectstorage.com`); defaults to management.location when it has Object Storage. */
  location: z
    .enum(objectStorageLocations, {
      error: (issue) => `${formatValue(issue.input)} has no Hetzner Object Storage; ${oneOf(objectStorageLocations)}`,
    })
    .optional()
    .describe("Object Storage location of the bucket (endpoint <location>.your-objectstorage.com); defaults to management.location when it has Object Storage."),
  /** Bucket, created beforehand in the Hetzner console (k3s refuses to upload to a missing bucket). */
  bucket: bucketName.describe("Bucket for the snapshots, created beforehand in the Hetzner console (k3s refuses to upload to a missing bucket)."),
  /** Prefix of the snapshots in the bucket; defaults to the fleet name (capi-fleet-<stack>). */
  folder: z
    .string()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/, {
      error: "is not a folder; allowed: letters, digits, '.', '_', '-' and '/', starting and ending with a letter or digit",
    })
    .optional()
    .describe("Prefix of the snapshots in the bucket; defaults to the fleet name, capi-fleet-<stack>."),
  /** When each server snapshots etcd (k3s `etcd-snapshot-schedule-cron`). */
  schedule: z
    .string()
    .check((ctx) => {
      const problem = cronScheduleProblem(ctx.value);
      if (problem) ctx.issues.push(customIssue(ctx.value, problem));
    })
    .default("0 */6 * * *")
    .describe("Cron schedule of each server's etcd snapshots (k3s etcd-snapshot-schedule-cron); reaches only servers created later."),
  /** Snapshots each server keeps, locally and in the bucket (k3s `etcd-snapshot-retention`). */
  retention: z
    .int({ error: (issue) => `${formatValue(issue.input)} is not a whole number; allowed: 1 to 1000` })
    .min(1, { error: "must be at least 1; allowed: 1 to 1000" })
    .max(1000, { error: "must be at most 1000; allowed: 1 to 1000" })
    .default(28)
    .describe("Snapshots each server keeps, locally and in the bucket (k3s etcd-snapshot-retention); reaches only servers created later."),
});

const hetznerManagementSchema = strictObject({
  /** Build the management cluster on hcloud servers. */
  mode: z.literal("hetzner").describe("hetzner: build the management cluster (k3s) on hcloud servers."),
  /** Location of the servers and the API load balancer. */
  location: location.describe("Hetzner Cloud location of the management servers and their API load balancer."),
  /** hcloud server type of each k3s server, e.g. cx33. */
  serverType: serverType.describe("hcloud server type of each k3s server, e.g. cx33; a type the catalog does not list is a warning (only Hetzner's API knows the current list)."),
  /** k3s servers: 1 (no HA) or 3 (embedded etcd quorum). */
  servers: z.literal([1, 3], {
    error: (issue) =>
      `${formatValue(issue.input)} servers is not allowed; allowed: 1 or 3 (embedded etcd needs an odd member count, and 1 has no HA)`,
  }).describe("Number of k3s servers: 1 (no HA) or 3 (embedded etcd quorum)."),
  /** k3s release (vMAJOR.MINOR.PATCH+k3sN); defaults to the catalog's; its minor must suit the platform. */
  k3sVersion: managementVersion(parseK3sVersion, exampleK3sVersion, "hetzner").default(catalog.k3s.version).describe("k3s release of the servers (vMAJOR.MINOR.PATCH+k3sN); its minor must suit the platform. A change upgrades the running servers in place, one minor at a time."),
  /** hcloud image of the servers. */
  image: z.string().min(1).default(catalog.managementImage).describe("hcloud image of the servers; an image outside the catalog's system images is a warning (it may be your snapshot)."),
  /** Private network of the servers and the load balancer. */
  network: strictObject({
    cidr: cidr({ privateIpv4: true }).default("10.0.0.0/16").describe("RFC 1918 range of the servers' private network; must not overlap k3s' pod (10.42.0.0/16) and service (10.43.0.0/16) ranges."),
    subnetCidr: cidr({ privateIpv4: true }).default("10.0.1.0/24").describe("Subnet of the network that the servers and the load balancer use; inside cidr."),
  }).prefault({}).describe("Private network of the servers and the API load balancer."),
  /** Sources allowed to reach SSH (22) and the Kubernetes API (6443) on the servers; never the whole Internet unless allowAdminFromAnywhere. */
  adminCidrs: z.array(cidr()).min(1, { error: "needs at least one CIDR; SSH and the API would be closed to everyone" }).describe("Source ranges allowed to reach SSH (22) and the Kubernetes API (6443) on the servers, and SSH on tenant servers with an sshKeyName; ranges that together cover every IPv4 or IPv6 address are refused unless allowAdminFromAnywhere."),
  /** Explicit opt-in (throwaway dev stacks only) for adminCidrs that cover every address of IPv4 or IPv6. */
  allowAdminFromAnywhere: z.boolean().default(false).describe("Accept adminCidrs open to the whole Internet, for throwaway dev stacks only."),
  /** OpenSSH public key installed for root on the servers. */
  sshPublicKey: sshPublicKey.describe("OpenSSH public key installed for root on the servers (checked to really be a public key)."),
  /**
   * hcloud delete/rebuild protection plus Pulumi `protect` on servers, network and load
   * balancer, and Pulumi `protect` on every tenant (so a removed or renamed tenant stops the
   * update instead of deleting its cluster).
   */
  deletionProtection: z.boolean().default(true).describe("hcloud delete/rebuild protection and Pulumi protect on the management cluster, and Pulumi protect on every tenant: a removed or renamed tenant stops pulumi up before anything of it is deleted."),
  /** hcloud load-balancer type of the API endpoint. */
  apiLoadBalancerType: z.enum(loadBalancerTypes, {
    error: (issue) => `${formatValue(issue.input)} is not a load-balancer type; ${oneOf(loadBalancerTypes)}`,
  }).default("lb11").describe("hcloud load-balancer type of the management cluster's API endpoint."),
  /** etcd snapshots to Hetzner Object Storage (off when absent); the credentials are the secret `etcdS3Credentials`. */
  backups: etcdBackupsSchema.optional().describe("etcd snapshots to Hetzner Object Storage, off when absent; needs the secret etcdS3Credentials."),
  /**
   * The server (1-based) whose first boot starts the etcd cluster; the others join it. Only a
   * created server reads it: set another one before replacing a lost server 1 of a running
   * cluster, so the new server joins instead of starting a second cluster (docs/operations.md).
   */
  initServer: z
    .int({ error: (issue) => `${formatValue(issue.input)} is not a server number; allowed: 1, 2 or 3, at most management.servers` })
    .min(1, { error: "must be 1 or more; allowed: 1, 2 or 3, at most management.servers" })
    .max(3, { error: "must be 3 or less; allowed: 1, 2 or 3, at most management.servers" })
    .default(1)
    .describe("The server (1 to servers) whose first boot starts etcd; the others join it. Read only when a server is created: set another before replacing a lost server 1."),
});

/** `management.certManager` in existing mode. */
export const certManagerModes = ["install", "existing"] as const;

const existingManagementSchema = strictObject({
  /** Use a cluster that already exists; its kubeconfig is the secret `capi-fleet:managementKubeconfig`. */
  mode: z.literal("existing").describe("existing: use a cluster that already exists; its kubeconfig is the secret managementKubeconfig."),
  /** Kubernetes version the existing cluster runs (checked against the platform's management range). */
  kubernetesVersion: managementVersion(parseKubernetesVersion, exampleKubernetesVersion, "existing").describe("Kubernetes version the existing cluster runs; its minor must suit the platform."),
  /** Pulumi `protect` on every tenant: a removed or renamed tenant stops the update instead of deleting its cluster. */
  deletionProtection: z.boolean().default(true).describe("Pulumi protect on every tenant: a removed or renamed tenant stops pulumi up instead of deleting its cluster."),
  /** Whether the fleet installs cert-manager or uses the one the cluster already runs. */
  certManager: z.enum(certManagerModes, { error: (issue) => `${formatValue(issue.input)} is not allowed; ${oneOf(certManagerModes)}` })
    .default("install")
    .describe("install: the fleet installs cert-manager (pulumi up stops before changing anything when the cluster already runs one it does not own); existing: it uses the cluster's cert-manager and installs none."),
});

const managementSchema = z.discriminatedUnion("mode", [hetznerManagementSchema, existingManagementSchema], {
  error: (issue) => `mode ${formatValue((issue.input as { mode?: unknown } | undefined)?.mode)} is not supported; ${oneOf(["hetzner", "existing"])}`,
});

/** An image with a registry host, a path and a tag or a sha256 digest (the tag "latest" is not a pin). */
const pinnedImagePattern = /^[a-z0-9.-]+(:[0-9]+)?\/[a-z0-9._/-]+(:(?!latest$)[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$/;

/** Who sizes an autoscaled pool: the cluster autoscaler (the default) or Karpenter (experimental). */
export const autoscalerProviders = ["cluster-autoscaler", "karpenter"] as const;

/** Karpenter's consolidation policies (sigs.k8s.io/karpenter@v1.4.0: pkg/apis/crds/karpenter.sh_nodepools.yaml). */
export const karpenterConsolidationPolicies = ["WhenEmptyOrUnderutilized", "WhenEmpty"] as const;

/** A Karpenter duration: Go units s, m, h, or Never (the NodePool CRD's pattern for expireAfter and consolidateAfter). */
const karpenterDurationPattern = /^(([0-9]+(s|m|h))+|Never)$/;
function karpenterDuration() {
  return z.string().check((ctx) => {
    if (!karpenterDurationPattern.test(ctx.value)) {
      ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not a Karpenter duration; allowed: hours, minutes and seconds such as 720h, 30m, 1h30m or 0s, or Never`));
    }
  });
}

/** `autoscaling` for the cluster autoscaler: `provider` may be left out. */
const clusterAutoscalerSchema = strictObject({
  provider: z.literal("cluster-autoscaler").optional().describe("cluster-autoscaler (the default when left out): the Kubernetes cluster autoscaler sizes the pool between minSize and maxSize."),
  minSize: z.int().min(0, { error: "must be 0 or more; allowed: 0 to 100" }).max(100, { error: "must be at most 100 per pool; allowed: 0 to 100" }).describe("Fewest servers the autoscaler keeps; 0 (scale from zero) is not available on Arm cax types."),
  maxSize: z.int().min(1, { error: "must be 1 or more; allowed: minSize to 100" }).max(100, { error: "must be at most 100 per pool; allowed: minSize to 100" }).describe("Most servers the autoscaler creates; at least minSize."),
});

/**
 * `autoscaling` for Karpenter (experimental): the tenant's NodePool of this pool, with its limits
 * (platform/karpenter.ts). Karpenter has no min/max: it creates a server for pods that fit no node
 * while the pool's servers stay under `cpuLimit`, and removes servers it consolidates.
 */
const karpenterSchema = strictObject({
  provider: z.literal("karpenter").describe("EXPERIMENTAL karpenter: kubernetes-sigs/karpenter-provider-cluster-api v0.2 adds servers for pending pods that fit no node (from zero too), up to cpuLimit, and removes the ones it consolidates; needs karpenter.image (no image is published) and a server type of known size; one server type per pool, no price or spot choice; its limits: docs/tenants.md, Karpenter."),
  cpuLimit: z.int().min(1, { error: "must be 1 or more; allowed: 1 to 1000" }).max(1000, { error: "must be at most 1000; allowed: 1 to 1000" }).describe("Most vCPUs the pool's servers may have together (the NodePool's limits.cpu); Karpenter creates no server beyond it."),
  expireAfter: karpenterDuration().default("720h").describe("Age after which Karpenter replaces a server (the NodePool's expireAfter), e.g. 720h; Never keeps servers until consolidated."),
  consolidation: strictObject({
    policy: z.enum(karpenterConsolidationPolicies, { error: (issue) => `${formatValue(issue.input)} is not allowed; ${oneOf(karpenterConsolidationPolicies)}` })
      .default("WhenEmptyOrUnderutilized")
      .describe("Which servers Karpenter may remove: WhenEmptyOrUnderutilized (also moves pods to pack them onto fewer servers) or WhenEmpty (only servers with no pods but DaemonSets)."),
    after: karpenterDuration().default("30s").describe("How long a server must qualify before Karpenter removes it (the NodePool's consolidateAfter), e.g. 30s, 10m; Never turns consolidation off."),
  }).prefault({}).describe("When Karpenter removes servers it no longer needs (the NodePool's disruption)."),
});

const workerPoolSchema = strictObject({
  /** MachineDeployment name inside the tenant, e.g. md-0. */
  name: dnsLabel().describe("Name of the pool (its MachineDeployment) inside the tenant, e.g. md-0; a DNS label, unique in the tenant."),
  /** Number of worker servers; 0 keeps the pool defined but empty. Exclusive with `autoscaling`. */
  replicas: z.int().min(0, { error: "must be 0 or more" }).max(100, { error: "must be at most 100 per pool" }).optional().describe("Number of worker servers; 0 keeps the pool defined but empty. Required unless autoscaling is set, and exclusive with it."),
  /**
   * Let an autoscaler size the pool instead of `replicas`: the cluster autoscaler (the default,
   * between minSize and maxSize) or, experimental, Karpenter (platform/karpenter.ts). Both run
   * on the management cluster, installed by the program; cluster-autoscaler.ts and karpenter.ts
   * say what CAPI then does.
   */
  autoscaling: z.discriminatedUnion("provider", [clusterAutoscalerSchema, karpenterSchema], {
    error: (issue) => `${formatValue((issue.input as { provider?: unknown } | undefined)?.provider)} is not an autoscaler the fleet runs; ${oneOf(autoscalerProviders)}`,
  }).optional().describe("Let an autoscaler on the management cluster size the pool instead of replicas: the cluster autoscaler (provider cluster-autoscaler, the default) or, experimental, Karpenter (provider karpenter)."),
  /** hcloud server type of the workers. */
  machineType: serverType.describe("hcloud server type of the pool's servers, e.g. cpx31."),
  /** Location of the pool's servers; must be one of the tenant's regions. */
  failureDomain: location.describe("Location of the pool's servers; one of the tenant's regions."),
  /** hcloud image of the pool's servers; defaults to the tenant's `image`. */
  image: z.string().min(1).optional().describe("hcloud image of the pool's servers; defaults to the tenant's image."),
  /**
   * Put the pool's servers in their own spread placement group (different physical hosts).
   * Hetzner caps a group at 10 servers, so the pool may then have at most 9 replicas.
   */
  placementGroup: z.boolean().default(false).describe("Put the pool's servers in their own spread placement group (different physical hosts); the pool may then have at most 9 replicas, or maxSize 9."),
});

/** CAREN's `kubeProxy.mode` values (`disabled`: Cilium replaces kube-proxy). */
export const kubeProxyModes = ["iptables", "nftables", "disabled"] as const;

/**
 * A host name or IP address as CAREN's `ntp.servers` rule takes it
 * (nutanix-cloud-native/cluster-api-runtime-extensions-nutanix@v0.50.0: api/v1alpha1/clusterconfig_types.go, NTP).
 */
const ntpServer = z.string().check((ctx) => {
  const value = ctx.value;
  if (isIP(value) === 0 && (value.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$/.test(value))) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not an NTP server; allowed: an IP address or a lower-case host name such as 0.de.pool.ntp.org`));
  }
});

/** An http:// or https:// URL (CAREN's registry fields: `format: uri`, `pattern: ^https?://`). */
function httpUrl(what: string) {
  return z.string().check((ctx) => {
    const url = URL.parse(ctx.value);
    if (!url || !["http:", "https:"].includes(url.protocol) || !url.hostname || !/^https?:\/\//.test(ctx.value) || ctx.value.length > 2048) {
      ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not ${what}; allowed: an http:// or https:// URL such as https://registry.example.com`));
    }
  });
}

/**
 * Registry credentials: the name of an entry of the secret config key
 * `tenantRegistryCredentials.<tenant>` (username, password, optional caCrt), from which the
 * program creates a Secret in the tenant's namespace for CAREN to read.
 */
const registryCredentialsRef = dnsLabel(40).optional();

const imageRegistrySchema = strictObject({
  /** Registry URL, e.g. https://registry.example.com (CAREN `imageRegistries[].url`). */
  url: httpUrl("a registry URL").describe("Registry URL, http:// or https://, e.g. https://registry.example.com (CAREN imageRegistries[].url)."),
  /** Name of the credentials in `tenantRegistryCredentials.<tenant>`; none for a public registry. */
  credentials: registryCredentialsRef.describe("Name of an entry of the secret tenantRegistryCredentials.<tenant> holding the registry's credentials; none for a public registry."),
});

/** A login name cloud-init can create (lower-case, as useradd takes it by default). */
const userName = z.string().check((ctx) => {
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(ctx.value) || ctx.value === "root") {
    ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not allowed as a user name; allowed: up to 32 lower-case letters, digits, '_' or '-', starting with a letter or '_', not root`));
  }
});

const tenantSchema = strictObject({
  /** Cluster name; DNS-1123 label, unique in the fleet. */
  name: dnsLabel().describe("Cluster name: a DNS label of at most 50 characters, unique in the fleet."),
  /** Namespace of the Cluster object; defaults to the tenant name. */
  namespace: dnsLabel().optional().describe("Namespace of the tenant's Cluster on the management cluster, a DNS label; defaults to the tenant name, and must not be one the platform uses."),
  /** Target Kubernetes version; one of the ClusterClass kubernetesVersions. */
  kubernetesVersion: tenantKubernetesVersion.describe("Target Kubernetes version, one of the ClusterClass kubernetesVersions; may be several minors ahead of what runs (upgraded one minor at a time)."),
  /** Control-plane locations (CAPH failure domains), all in one network zone. */
  regions: z.array(location).min(1, { error: "needs at least one location" }).describe("Control-plane locations (CAPH failure domains), all in one network zone."),
  controlPlane: strictObject({
    /** 1, 3 or 5: an etcd quorum needs an odd member count. */
    replicas: z.literal([1, 3, 5], {
      error: (issue) => `${formatValue(issue.input)} replicas is not allowed; allowed: 1, 3 or 5 (etcd needs an odd member count)`,
    }).describe("Number of control-plane servers: an etcd quorum needs an odd member count."),
    machineType: serverType.describe("hcloud server type of the control-plane servers, e.g. cx33."),
    /** Spread the control-plane servers over different physical hosts (placement group). */
    placementGroup: z.boolean().default(true).describe("Spread the control-plane servers over different physical hosts (a spread placement group)."),
  }).describe("The tenant's control plane (KubeadmControlPlane)."),
  /** hcloud image of the tenant's servers; the ClusterClass installs Kubernetes on it at boot. */
  image: z.string().min(1).default(catalog.tenantNodeImage).describe("hcloud image of the tenant's servers (stock Ubuntu: each node installs its Kubernetes version at boot); an image outside the catalog is a warning."),
  /** Name of an SSH key in the tenant's Hetzner project, installed on every server (optional). */
  sshKeyName: z
    .string()
    .min(1, { error: "is empty; allowed: the name of an SSH key in the tenant's Hetzner project, or leave the key out" })
    .max(128, { error: "is longer than hcloud's 128-character limit for SSH key names" })
    .optional()
    .describe("Name of an SSH key in the tenant's Hetzner project, installed on every server; opens SSH from management.adminCidrs in the tenant's firewall. Without it SSH stays closed."),
  /** hcloud load-balancer type of the tenant's API endpoint. */
  apiLoadBalancerType: z.enum(loadBalancerTypes, {
    error: (issue) => `${formatValue(issue.input)} is not a load-balancer type; ${oneOf(loadBalancerTypes)}`,
  }).default("lb11").describe("hcloud load-balancer type of the tenant's API endpoint."),
  /** Worker pools (MachineDeployments). */
  workers: z.array(workerPoolSchema).min(1, { error: "needs at least one worker pool" }).describe("Worker pools (MachineDeployments), at least one."),
  /**
   * Node Feature Discovery, installed by CAREN's `addons.nfd` handler into the workload cluster
   * (labels nodes with their CPU, kernel and PCI features); absent means not installed.
   */
  nfd: strictObject({
    strategy: z.enum(cniStrategies, {
      error: (issue) => `${formatValue(issue.input)} is not a CAREN addon strategy; ${oneOf(cniStrategies)}`,
    }).default("HelmAddon").describe("How CAREN installs Node Feature Discovery."),
  }).optional().describe("Node Feature Discovery in the workload cluster (CAREN addons.nfd), which labels nodes with their CPU, kernel and PCI features; absent: not installed."),
  /** Cluster networking. Defaults follow CAPH's examples. */
  network: strictObject({
    /** hcloud private network of the tenant's servers. */
    nodesCidr: cidr({ privateIpv4: true }).default("10.0.0.0/16").describe("hcloud private network of the tenant's servers."),
    /** The hcloud subnet the servers and the API load balancer use; defaults to the first /24 of nodesCidr. */
    nodesSubnetCidr: cidr({ privateIpv4: true }).optional().describe("The hcloud subnet of the servers and the API load balancer, inside nodesCidr and with an address for every server the tenant can have at once; defaults to the first /24 of nodesCidr."),
    podsCidr: cidr({ privateIpv4: true }).default("192.168.0.0/16").describe("Pod range: /8 to /24 (kubeadm's limits), with one /24 per server the tenant can have at once (replicas plus one rollout surge per pool and control plane)."),
    servicesCidr: cidr({ privateIpv4: true }).default("10.128.0.0/12").describe("Service range, /12 to /28 (kubeadm's limits)."),
    /**
     * Tenants naming the same routing domain can reach each other (shared or peered
     * network, VPN), so their node, pod and service ranges must not overlap.
     */
    routingDomain: dnsLabel().optional().describe("Tenants naming the same routing domain can reach each other (shared or peered network, VPN), so their node, pod and service ranges must not overlap."),
  }).prefault({}).describe("Cluster networking; node, pod and service ranges must not overlap. Defaults follow CAPH's examples."),
  /** CNI delivered by CAREN's lifecycle hooks (`clusterConfig.addons.cni`). */
  cni: strictObject({
    provider: z.literal("cilium", {
      error: (issue) =>
        `${formatValue(issue.input)} is not supported on Hetzner; allowed: cilium (CAREN skips Calico for HetznerCluster)`,
    }).describe("The CNI; only Cilium (CAREN skips Calico for HetznerCluster)."),
    /** Always explicit: CAREN's Cilium handler fails on an empty strategy. */
    strategy: z.enum(cniStrategies, {
      error: (issue) => `${formatValue(issue.input)} is not a CAREN addon strategy; ${oneOf(cniStrategies)}`,
    }).default("HelmAddon").describe("How CAREN installs Cilium; kube-proxy replacement needs HelmAddon."),
    /** Replace kube-proxy with Cilium: the same as `kubeProxy.mode: disabled` (kept for existing stacks). */
    kubeProxyReplacement: z.boolean().default(false).describe("Replace kube-proxy with Cilium: the older spelling of kubeProxy.mode: disabled."),
    /**
     * Cilium Helm values (a mapping). The program puts them in a ConfigMap in the tenant's
     * namespace and points `addons.cni.values.sourceRef` at it; they replace CAREN's default
     * values template as a whole (HelmAddon strategy only).
     */
    values: z.record(z.string(), z.unknown()).optional().describe("Cilium Helm values (a mapping, HelmAddon only); they replace CAREN's default values template as a whole, so keep what it sets (ipam.mode, k8sServiceHost/Port)."),
  }).prefault({ provider: "cilium" }).describe("CNI delivered by CAREN's lifecycle hooks (CAREN addons.cni)."),
  /** kube-proxy (CAREN `kubeProxy.mode`); fixed once the cluster exists. Unset: kubeadm's default, iptables. */
  kubeProxy: strictObject({
    mode: z.enum(kubeProxyModes, {
      error: (issue) => `${formatValue(issue.input)} is not a kube-proxy mode; ${oneOf(kubeProxyModes)} (disabled: Cilium replaces kube-proxy)`,
    }).describe("kube-proxy mode; disabled: Cilium replaces kube-proxy (needs cni.strategy HelmAddon)."),
  }).optional().describe("kube-proxy (CAREN kubeProxy.mode), fixed once the cluster exists; unset: kubeadm's default, iptables."),
  /** Time servers of every node (CAREN `ntp.servers`); unset: the image's default. */
  ntp: strictObject({
    servers: z.array(ntpServer).min(1, { error: "needs at least one server" }).max(16, { error: "must list at most 16 servers" }).describe("IP addresses or host names of the time servers."),
  }).optional().describe("Time servers of every node (CAREN ntp.servers); unset: the image's default."),
  /** HTTP proxy for containerd and kubelet on every node (CAREN `proxy`). */
  proxy: strictObject({
    http: httpUrl("a proxy URL").optional().describe("Proxy for http:// requests, an http:// or https:// URL."),
    https: httpUrl("a proxy URL").optional().describe("Proxy for https:// requests, an http:// or https:// URL; it must allow CONNECT to the tenant's API load balancer on 6443."),
    /** Added to the no-proxy list CAREN computes (localhost, pod and service ranges, cluster domains). CAREN `proxy.additionalNo`. */
    additionalNoProxy: z.array(z.string().min(1).max(253)).max(128, { error: "must list at most 128 entries" }).optional().describe("Added to the no-proxy list CAREN computes (localhost, pod and service ranges, cluster domains); CAREN proxy.additionalNo."),
  }).optional().describe("HTTP proxy for containerd and the kubelet on every node (CAREN proxy); set http, https or both."),
  /** Registries the nodes pull from, with optional credentials (CAREN `imageRegistries`). */
  imageRegistries: z.array(imageRegistrySchema).max(32, { error: "must list at most 32 registries" }).optional().describe("Registries the nodes pull from, with optional credentials (CAREN imageRegistries); CAREN's preflight webhook pings each from the management cluster."),
  /** A mirror for every registry (CAREN `globalImageRegistryMirror`). */
  globalImageRegistryMirror: strictObject({
    url: httpUrl("a mirror URL").describe("Mirror URL, http:// or https://."),
    credentials: registryCredentialsRef.describe("Name of an entry of the secret tenantRegistryCredentials.<tenant> holding the mirror's credentials; none for a public mirror."),
  }).optional().describe("A mirror containerd tries first for every registry (CAREN globalImageRegistryMirror)."),
  /** Login users on every node (CAREN `users`), SSH keys only (no passwords). */
  users: z
    .array(
      strictObject({
        name: userName.describe("Login name: lower-case, not root."),
        sshAuthorizedKeys: z.array(sshPublicKey).min(1, { error: "needs at least one key: a user without one cannot log in" }).max(100).describe("OpenSSH public keys of the user, at least one."),
        /** A sudoers specification such as "ALL=(ALL) NOPASSWD:ALL"; unset: no sudo. */
        sudo: z.string().min(1).max(256).optional().describe("A sudoers specification such as ALL=(ALL) NOPASSWD:ALL; unset: no sudo."),
      }),
    )
    .max(32, { error: "must list at most 32 users" })
    .optional()
    .describe("Login users on every node (CAREN users), SSH keys only, no passwords; SSH itself is open only with sshKeyName."),
  /**
   * CAREN deletes the tenant's LoadBalancer Services before the Cluster goes away, so
   * hcloud load balancers are not orphaned. `false` writes the opt-out annotation
   * `caren.nutanix.com/loadbalancer-gc: "false"` (there is no CAREN variable for this).
   */
  loadBalancerGarbageCollection: z.boolean().default(true).describe("CAREN deletes the tenant's LoadBalancer Services before the Cluster goes away, so no hcloud load balancer is orphaned; false writes CAREN's opt-out annotation."),
  /**
   * CAREN's preflight webhook checks every create and spec change of the Cluster; `skip` names
   * checks it must not run for this tenant, e.g. `[Registry]` when the management cluster cannot
   * reach the tenant's registries (docs/tenants.md, "When the management cluster must reach a tenant's
   * registries"). Written as CAREN's `preflight.cluster.caren.nutanix.com/skip` annotation.
   */
  carenPreflight: strictObject({
    skip: z
      .array(
        z.enum(carenPreflightChecks, {
          error: (issue) => `${formatValue(issue.input)} is not a preflight check CAREN runs for this fleet; ${oneOf(carenPreflightChecks)}`,
        }),
      )
      .min(1, { error: `names no check; ${oneOf(carenPreflightChecks)}, or leave carenPreflight out` })
      .describe("Checks of CAREN's preflight webhook not to run for this tenant, e.g. Registry when the management cluster cannot reach the tenant's registries."),
  }).optional().describe("CAREN's preflight webhook for this tenant (the annotation preflight.cluster.caren.nutanix.com/skip)."),
  /**
   * The tenant's Karpenter provider (experimental), needed when a pool has `autoscaling.provider:
   * karpenter`. karpenter-provider-cluster-api publishes no image a user can pull (catalog.ts,
   * karpenterClusterApi), so the image built from its release tag is a setting.
   */
  karpenter: strictObject({
    image: z.string().check((ctx) => {
      if (!pinnedImagePattern.test(ctx.value)) {
        ctx.issues.push(customIssue(ctx.value, `${formatValue(ctx.value)} is not a pinned image reference; allowed: <registry>/<path>:<tag> or <registry>/<path>@sha256:<digest>, e.g. registry.example.com/karpenter-clusterapi-controller:v0.2.0`));
      }
    }).describe("EXPERIMENTAL. Image of karpenter-provider-cluster-api's controller, built from its release tag (the project publishes none), pinned by tag or digest, e.g. registry.example.com/karpenter-clusterapi-controller:v0.2.0."),
  }).optional().describe("EXPERIMENTAL. The tenant's Karpenter provider on the management cluster; required when a pool has autoscaling.provider karpenter."),
  /**
   * Extra annotations on the tenant's Cluster, e.g. `topology.cluster.x-k8s.io/upgrade-concurrency`.
   * CAREN's LB-GC opt-out and preflight skip are not among them: use
   * `loadBalancerGarbageCollection` and `carenPreflight.skip`.
   */
  annotations: z.record(annotationKey, z.string()).default({}).describe("Extra annotations on the tenant's Cluster, e.g. topology.cluster.x-k8s.io/upgrade-concurrency; not CAREN's LB-GC opt-out or preflight skip (use their fields)."),
  /**
   * `pulumi up` waits, bounded, until CAPI reports the new Cluster `Available` (its control
   * plane, workers, infrastructure and the management cluster's connection to it), and fails
   * naming the conditions that are not True. `false` (large fleets) waits only for the
   * kubeconfig Secret, which CAPI writes long before the cluster is usable.
   */
  waitForReady: z.boolean().default(true).describe("pulumi up waits (bounded) until CAPI reports the new Cluster Available; false, for large fleets, waits only for the kubeconfig Secret."),
  /** Volumes of the hcloud CSI driver. */
  storage: strictObject({
    /**
     * What happens to an hcloud volume when its PersistentVolumeClaim is deleted. `Delete`
     * (default) removes it; `Retain` keeps it, and it keeps costing money until someone
     * deletes it by hand.
     */
    reclaimPolicy: z.enum(reclaimPolicies, {
      error: (issue) => `${formatValue(issue.input)} is not a reclaim policy; ${oneOf(reclaimPolicies)}`,
    }).default("Delete").describe("What happens to an hcloud volume when its PersistentVolumeClaim is deleted: Delete removes it; Retain keeps it, and it keeps costing money until deleted by hand."),
  }).prefault({}).describe("Volumes of the hcloud CSI driver."),
  /**
   * The tenant's applications, synced by Flux from the fleet repository (needs `gitops`)
   * into the workload cluster through its CAPI kubeconfig Secret.
   */
  apps: strictObject({
    /** Directory in the fleet repository with the tenant's manifests or kustomization. */
    path: repoPath.describe("Directory in the fleet repository with the tenant's manifests or kustomization."),
  }).optional().describe("The tenant's applications, synced by Flux from the fleet repository into the workload cluster; needs gitops."),
});

const gitOpsSchema = strictObject({
  /** Repository Flux syncs, https:// or ssh://. */
  url: gitUrl.describe("Repository Flux syncs, https:// or ssh:// (not the scp-style user@host:path)."),
  branch: z.string().regex(/^[\w./-]+$/, { error: "is not a branch name" }).default("main").describe("Branch Flux syncs."),
  paths: strictObject({
    /** Platform add-ons; reconciled first. */
    infrastructure: repoPath.default("./infrastructure").describe("Platform add-ons; reconciled first."),
    /** Tenant workloads; reconciled after infrastructure is healthy. */
    tenants: repoPath.default("./tenants").describe("Tenant workloads; reconciled after infrastructure is healthy."),
  }).prefault({}).describe("Directories in the repository that Flux applies, relative to its root."),
  /** Name of a Secret in flux-system with the repository credentials (private repositories). */
  secretRef: dnsLabel().optional().describe("Name of a Secret in flux-system with the repository's credentials, which you create (flux create secret git); Pulumi only references it."),
});

/**
 * An OCI repository name without a tag: a registry host (optional port), then path components
 * (oras.land/oras-go/v2@v2.6.2, the version sigs.k8s.io/cluster-api-operator@v0.28.0 requires: registry/reference.go, which cluster-api-operator parses
 * `fetchConfig.oci` with; the same grammar as github.com/distribution/reference's regexp.go).
 */
const ociRepositoryPattern = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

const chartMirror = z.string().check((ctx) => {
  const value = ctx.value;
  const oci = value.startsWith("oci://") && ociRepositoryPattern.test(value.slice("oci://".length));
  const url = URL.parse(value);
  const http = !!url && ["https:", "http:"].includes(url.protocol) && !!url.hostname && !value.endsWith("/") && !url.search && !url.hash;
  if (!oci && !http) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not a chart repository; allowed: an https:// (or http://) Helm repository or an oci:// registry path such as oci://registry.example.com/charts, without a trailing '/'`));
  }
});

const providerMirror = z.string().check((ctx) => {
  const value = ctx.value;
  if (!ociRepositoryPattern.test(value.replace(/^http:\/\//, ""))) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not an OCI repository; allowed: registry[:port]/path such as registry.example.com/capi-providers, without a tag, or with http:// in front for a plain-HTTP registry`));
  }
});

const imageMirror = z.string().check((ctx) => {
  const value = ctx.value;
  // Container runtimes take the first component for a registry only with a '.' or ':' in it, or
  // localhost; anything else would pull from docker.io (distribution/reference: splitDockerDomain).
  const registry = value.split("/")[0] ?? "";
  if (!ociRepositoryPattern.test(value) || !(/[.:]/.test(registry) || registry === "localhost")) {
    ctx.issues.push(customIssue(value, `${formatValue(value)} is not a registry path; allowed: registry[:port][/path] whose registry has a '.' or a port, or is localhost, such as registry.example.com/mirror, without a scheme, a tag or a trailing '/'`));
  }
});

const mirrorsSchema = strictObject({
  charts: chartMirror.optional().describe("One Helm repository (https://, or http://) or OCI registry path (oci://) holding every chart the fleet installs, under the catalog's chart names and versions; unset: each chart's public repository."),
  providers: providerMirror.optional().describe("OCI repository prefix for the Cluster API providers' components: the artifact <providers>/<type>-<name>:<version> with metadata.yaml and <type>-components.yaml, e.g. <providers>/core-cluster-api:v1.12.10; unset: GitHub releases."),
  images: imageMirror
    .optional()
    .describe(
      "Registry path that holds the management platform's container images, each under its public path without the registry host: quay.io/jetstack/cert-manager-controller:v1.21.2 is pulled as <images>/jetstack/cert-manager-controller:v1.21.2; unset: the public registries. Covers cert-manager, cluster-api-operator, the providers, CAREN, the Flux Operator and Flux, and the tenants' cluster autoscalers; docs/delivery.md lists what it does not.",
    ),
});

/** The non-secret part of the fleet config, one schema per top-level config key. */
export const fleetConfigSchema = strictObject({
  management: managementSchema.describe("The management cluster that runs Cluster API and the platform: built on hcloud (mode hetzner) or an existing one (mode existing). Required except in a shard stack."),
  tenants: z.array(tenantSchema).default([]).describe("The tenants: one workload cluster each, in its own Hetzner project."),
  gitops: gitOpsSchema.optional().describe("The fleet repository that Flux on the management cluster syncs; absent: Flux syncs nothing."),
  mirrors: mirrorsSchema.optional().describe("Where the platform's charts, Cluster API providers and images come from instead of their public sources (air-gapped installs, egress proxies); docs/delivery.md."),
});

export type FleetSettings = z.output<typeof fleetConfigSchema>;
export type ManagementSettings = FleetSettings["management"];
export type HetznerManagementSettings = Extract<ManagementSettings, { mode: "hetzner" }>;
export type ExistingManagementSettings = Extract<ManagementSettings, { mode: "existing" }>;
export type TenantSettings = FleetSettings["tenants"][number];
export type WorkerPoolSettings = TenantSettings["workers"][number];
export type GitOpsSettings = NonNullable<FleetSettings["gitops"]>;
export type MirrorSettings = NonNullable<FleetSettings["mirrors"]>;

export type EtcdBackupSettings = NonNullable<HetznerManagementSettings["backups"]>;
