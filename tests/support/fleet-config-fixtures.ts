// Test helper (not a test file): the valid fleet the parseFleetConfig tests start from, a shard
// stack's values, the builders
// their cases share, and the check of a bad-input table's rows. Tests beside each concern's code
// (config/, management/, tenant/) import it.
import { expect } from "vitest";
import { fakeHcloudToken } from "./stack-files";
import { catalog } from "../../infra/model/versions/catalog";
import { configKeys, FleetConfigError, type StackConfigInput } from "../../infra/model/config/stack-config";
import { parseFleetConfig } from "../../infra/model/stack/validate-fleet-config";

/** The version the fixture's tenants and existing management cluster run: one the catalog offers tenants. */
export const fixtureKubernetesVersion = catalog.tenantKubernetesVersions[1];

/** A valid fleet in the shape of a stack file; each case mutates one thing. */
export interface RawFleet {
  management: Record<string, unknown>;
  tenants: Record<string, unknown>[];
  gitops?: Record<string, unknown>;
  tenantHcloudTokens: Record<string, unknown>;
  hcloudToken?: string;
  managementKubeconfig?: string;
  extraKeys: Record<string, string>;
  plainKeys: string[];
}

export const alphaToken = fakeHcloudToken("alpha");
export const betaToken = fakeHcloudToken("beta");
export const managementToken = fakeHcloudToken("management");
const sshPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvPumWclk91ATYkXgfL5uBdvqjGrjAatvRuTP4arftF test";
export const kubeconfig = [
  "apiVersion: v1",
  "clusters: [{name: c, cluster: {server: 'https://10.1.2.3:6443', certificate-authority-data: c2VjcmV0}}]",
  "users: [{name: u, user: {token: super-secret-bearer}}]",
  "contexts: [{name: ctx, context: {cluster: c, user: u}}]",
  "current-context: ctx",
].join("\n");

export function tenant(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    kubernetesVersion: fixtureKubernetesVersion,
    regions: ["fsn1"],
    controlPlane: { replicas: 3, machineType: "cx33" },
    workers: [{ name: "md-0", replicas: 2, machineType: "cx23", failureDomain: "fsn1" }],
    ...overrides,
  };
}

export function baseline(): RawFleet {
  return {
    management: {
      mode: "hetzner",
      location: "fsn1",
      serverType: "cx33",
      servers: 3,
      adminCidrs: ["203.0.113.0/24"],
      sshPublicKey,
    },
    tenants: [tenant("alpha"), tenant("beta")],
    tenantHcloudTokens: { alpha: alphaToken, beta: betaToken },
    hcloudToken: managementToken,
    extraKeys: {},
    plainKeys: [],
  };
}

export function toInput(raw: RawFleet, allowPlaceholderSecrets = true): StackConfigInput {
  const values: Record<string, string> = {
    "capi-fleet:management": JSON.stringify(raw.management),
    "capi-fleet:tenants": JSON.stringify(raw.tenants),
    "capi-fleet:tenantHcloudTokens": JSON.stringify(raw.tenantHcloudTokens),
    ...raw.extraKeys,
  };
  if (raw.gitops) values["capi-fleet:gitops"] = JSON.stringify(raw.gitops);
  if (raw.hcloudToken !== undefined) values["hcloud:token"] = raw.hcloudToken;
  if (raw.managementKubeconfig !== undefined) values["capi-fleet:managementKubeconfig"] = raw.managementKubeconfig;
  const secretKeys = new Set(
    ["hcloud:token", "capi-fleet:tenantHcloudTokens", "capi-fleet:managementKubeconfig"].filter((key) => !raw.plainKeys.includes(key)),
  );
  return { stack: "test", values, secretKeys, allowPlaceholderSecrets };
}

export function problemsOf(input: StackConfigInput) {
  try {
    parseFleetConfig(input);
  } catch (error) {
    if (error instanceof FleetConfigError) return { error, problems: error.problems };
    throw error;
  }
  return { error: undefined, problems: [] };
}

export const existingMode = (raw: RawFleet) => {
  raw.management = { mode: "existing", kubernetesVersion: fixtureKubernetesVersion };
  delete raw.hcloudToken;
  raw.managementKubeconfig = kubeconfig;
};

/** The baseline as the runtime hands it over, with `extra` secret keys (stored with --secret) added. */
export function withSecrets(raw: RawFleet, extra: Record<string, string>, allowPlaceholderSecrets = true): StackConfigInput {
  const input = toInput(raw, allowPlaceholderSecrets);
  return { ...input, values: { ...input.values, ...extra }, secretKeys: new Set([...input.secretKeys, ...Object.keys(extra)]) };
}

export const pathsOf = (input: StackConfigInput) => problemsOf(input).problems.map((problem) => problem.path);
export const messageAt = (input: StackConfigInput, path: string) =>
  problemsOf(input).problems.filter((problem) => problem.path === path).map((problem) => problem.message).join("\n");
export const pool0 = (raw: RawFleet, tenantIndex = 0) => (raw.tenants[tenantIndex]!.workers as Record<string, unknown>[])[0]!;
/** An Object Storage key of Hetzner's length (20 and 40 characters). */
export const s3Keys = { accessKey: "A".repeat(20), secretKey: "s".repeat(40) };
export const objectStorage: readonly string[] = catalog.hcloud.objectStorageLocations;
export const withoutObjectStorage = Object.keys(catalog.hcloud.networkZoneOfLocation).find((location) => !objectStorage.includes(location))!;

/** [description, mutation, expected key path, fragment of the message naming what is allowed]. */
export type BadInput = [string, (raw: RawFleet) => void, string, string];

/** A bad input's row: the baseline with `mutate` applied is refused at `path`, naming `allowed`, and no secret shows in the error. */
export function expectRejected(mutate: (raw: RawFleet) => void, path: string, allowed: string): void {
  const raw = baseline();
  mutate(raw);
  const { error, problems } = problemsOf(toInput(raw));
  expect(error, "expected a FleetConfigError").toBeDefined();
  const atPath = problems.filter((candidate) => candidate.path === path);
  expect(atPath, `no problem at ${path}; got ${JSON.stringify(problems)}`).not.toHaveLength(0);
  expect(atPath.map((problem) => problem.message).join("\n")).toContain(allowed);
  expect(error!.message).toContain(`  - ${path}: `);
  for (const secret of [alphaToken, betaToken, managementToken, "super-secret-bearer"]) {
    expect(error!.message).not.toContain(secret);
  }
}

/** A shard stack's config values: `tenants` with a token each. */
export function shardValues(tenants: readonly object[], extra: Record<string, string> = {}): { values: Record<string, string>; secretKeys: string[] } {
  return {
    values: {
      [configKeys.managementStack]: "prod",
      [configKeys.tenants]: JSON.stringify(tenants),
      [configKeys.tenantHcloudTokens]: JSON.stringify(Object.fromEntries(tenants.map((tenant) => [(tenant as { name: string }).name, fakeHcloudToken(`t`)]))),
      ...extra,
    },
    secretKeys: [configKeys.tenantHcloudTokens],
  };
}
