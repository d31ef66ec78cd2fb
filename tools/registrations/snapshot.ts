// Writes what the program registers (type, name, parent, inputs, and the options the engine
// receives) for dev, prod and the bench's 50-tenant fleet, one sorted JSON file per fleet, so two
// checkouts can be compared with `diff -r`: a refactoring that changes no behaviour gives an empty
// diff. Run by `npm run registrations -- <directory>` (with tsx, as every TypeScript program of
// the repository: docs/testing.md, "Running the TypeScript programs").
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { loadFleetConfig } from "../../infra/config";
import { planTenantUpgradesOrStop } from "../../infra/deployed-state";
import { createFleet } from "../../infra/fleet";
import { generatedDeployedVersions, generatedStackConfig } from "../benchmarks/fleet-generator";
import { installRecordingMocks, settle, valueOf, type Registration } from "../../tests/support/pulumi-mocks";
import { fakeHcloudToken, readStackConfig, type RuntimeConfig } from "../../tests/support/stack-files";

const usage = "usage: npm run registrations -- <directory>";

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

/** Runs the program for one fleet under the recording mocks and writes `<outDir>/<fleet>.json`. */
async function record(fleet: Fleet, outDir: string): Promise<string> {
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
  const file = path.join(outDir, `${fleet.name}.json`);
  writeFileSync(file, `${JSON.stringify(sorted, null, 1)}\n`, { mode: 0o600 });
  return `${file} (${sorted.length} registrations)`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [directory] = argv;
  if (argv.length !== 1 || !directory) {
    console.error(usage);
    return 2;
  }
  // Resolved now: the mocks move the working directory to the program's (tests/support/engine-pwd.ts).
  const outDir = path.resolve(directory);
  mkdirSync(outDir, { recursive: true });
  // One after another in this process, each under mocks installed anew.
  for (const fleet of fleets) console.log(`registrations: ${fleet.name}: ${await record(fleet, outDir)}`);
  return 0;
}

main(process.argv.slice(2)).then(
  // The Pulumi runtime keeps handles open; the snapshot is written.
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
