// Writes what the program registers (type, name, parent, inputs, and the options the engine
// receives) for dev, prod and the bench's 50-tenant fleet, one sorted JSON file per fleet, so two
// checkouts can be compared with `diff -r`: a refactoring that changes no behaviour gives an empty
// diff. Run by `npm run registrations -- <directory>` (tools/registrations/snapshot).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { it } from "vitest";
import { loadFleetConfig } from "../../infra/config";
import { planTenantUpgradesOrStop } from "../../infra/deployed-state";
import { createFleet } from "../../infra/fleet";
import { generatedDeployedVersions, generatedStackConfig } from "../benchmarks/fleet-generator";
import { settle } from "../../tests/support/fleet-run";
import { installRecordingMocks, valueOf, type Registration } from "../../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig, type RuntimeConfig } from "../../tests/support/stack-files";

const outDir = process.env.REGISTRATIONS_OUT;
if (!outDir) throw new Error("REGISTRATIONS_OUT is not set: run `npm run registrations -- <directory>`");

interface Fleet {
  name: string;
  stack: string;
  config: () => RuntimeConfig;
  deployed: Record<string, string>;
}

const benchTenants = 50;
const fleets: Fleet[] = [
  { name: "dev", stack: "dev", config: () => readStackConfig("dev"), deployed: {} },
  { name: "prod", stack: "prod", config: () => readStackConfig("prod"), deployed: {} },
  {
    name: `bench-${benchTenants}`,
    stack: "prod",
    config: () => generatedStackConfig(readStackConfig("prod"), benchTenants, fakeHcloudToken),
    deployed: generatedDeployedVersions(benchTenants),
  },
];

/**
 * What each run generates anew (the PKI command's keys and certificates, PEM or base64 in a
 * kubeconfig, and the k3s join token); anything else must match byte for byte.
 */
function withoutGeneratedKeys(value: unknown): unknown {
  if (typeof value === "string") {
    return value
      .replace(/-----BEGIN ([A-Z ]+)-----[^-]+-----END \1-----/g, "-----BEGIN $1----- (generated) -----END $1-----")
      .replace(/(certificate-authority-data|client-certificate-data|client-key-data): [A-Za-z0-9+/=]+/g, "$1: (generated)")
      .replace(/\btoken: [0-9a-f]{64}\b/g, "token: (generated)");
  }
  if (Array.isArray(value)) return value.map(withoutGeneratedKeys);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutGeneratedKeys(inner)]));
  return value;
}

function comparable(registration: Registration) {
  const { type, name, parent, inputs, secretInputs, custom, urn, dependencies, provider, deleteTimeout, protect, readId } = registration;
  return withoutGeneratedKeys({ urn, type, name, parent, custom, provider, protect, deleteTimeout, readId, secretInputs, dependencies: [...dependencies].sort(), inputs });
}

for (const fleet of fleets) {
  it(`records ${fleet.name}`, async () => {
    const tenantVersions = Object.fromEntries(
      Object.entries(fleet.deployed).map(([tenant, version]) => [tenant, { deployed: version, target: version, controlPlaneSteps: [], workerSteps: [] }]),
    );
    const registrations = await installRecordingMocks("capi-fleet", fleet.stack, false, { tenantVersions });
    const { values, secretKeys } = fleet.config();
    pulumi.runtime.setAllConfig(values, secretKeys);
    const config = loadFleetConfig();
    const outputs = createFleet(config, `capi-fleet-${fleet.stack}`, planTenantUpgradesOrStop(config, new Map(Object.entries(fleet.deployed))));
    await valueOf(outputs.managementKubeconfig);
    await settle(registrations);
    const sorted = registrations.map(comparable).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, `${fleet.name}.json`), `${JSON.stringify(sorted, null, 1)}\n`, { mode: 0o600 });
  });
}
