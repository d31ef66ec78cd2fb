#!/usr/bin/env node
// @ts-check
/**
 * End to end: a throwaway stack through `pulumi up`, a check of its tenant, an upgrade, and
 * `pulumi destroy`, then a check that nothing billable is left in the Hetzner project. The same
 * steps run against Hetzner Cloud or against the local stand-ins of tests/in-the-loop/tenant-real-up.test.ts.
 * `--help` says what each target needs and costs.
 */
import { execFile } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tsImport } from "tsx/esm/api";
import { stringify } from "yaml";
import { kubeRequest, parseKubeconfig } from "../components/kube-client.mjs";
import { stackOutputs } from "../infra/model/contract/outputs.ts";

const program = "e2e";
const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const steps = ["up", "check", "upgrade", "destroy", "leftovers"];
const probeService = "capi-fleet-e2e-probe";

const usage = `usage: npm run e2e -- --target <hetzner|local> [--work <dir>] [--steps <${steps.join(",")}>] [--to <version>] [--keep] [--print-stack]

Creates a throwaway stack, runs \`pulumi up\`, checks each tenant (every node Ready, a LoadBalancer
Service answered by the hcloud CCM), upgrades the first tenant one Kubernetes minor (or to --to),
lifts the stack's protection and runs \`pulumi destroy\` (the runbook's teardown), and fails if
anything billable is left in a tenant's Hetzner project (scripts/hcloud-leftovers.mjs). Without
--steps it runs them all, in that order; a step alone continues the stack of an earlier run in the
same --work directory.

Targets
  hetzner  Hetzner Cloud, for real. Needs HCLOUD_TOKEN: the API token (read and write) of a
           Hetzner Cloud project used for nothing else; the script refuses a project that is not
           empty. E2E_ADMIN_CIDR: the address range (CIDR) you run it from, allowed to reach SSH and
           the management API. The stack: a management cluster in hetzner mode (1 x cx23) and one
           tenant "e2e" (control plane 1 x cx33, workers 1 x cx23, in fsn1), both in that project.
           Cost: 3 servers with their primary IPv4, CAPH's API load balancer and the probe's load
           balancer (2 x lb11) for the run, about 40-60 minutes: well under 1 EUR at Hetzner's
           hourly prices (npm run prices shows the table the fleet uses). Runs \`pulumi\` from PATH
           (plugins are downloaded as usual).
  local    The stand-ins of tests/in-the-loop/tenant-real-up.test.ts, which writes E2E_LOCAL_TARGET: a JSON file
           with the stack's config values and secrets (a management cluster in existing mode,
           tenants, local mirrors) and sets HCLOUD_ENDPOINT to its stand-in Hetzner API and
           PULUMI_HOME to the hand-built plugins. Costs nothing; see docs/testing.md.

Options
  --work <dir>  where the stack's backend, passphrase and files live (default
                node_modules/.cache/capi-fleet-e2e); remove it once a run has cleaned up
  --to <v>      the upgrade's target version (default: the next minor the catalog lists)
  --keep        on failure, leave everything for inspection instead of cleaning up
  --print-stack print the stack file the target would create (secrets as "secure" placeholders) and exit

After a failure (unless --keep) the script runs \`pulumi destroy\` and the leftovers check, and
prints what is left with the commands to remove it by hand; the stack's state stays in --work, so
\`npm run e2e -- --target <t> --work <dir> --steps destroy,leftovers\` can be run again.
Exit codes: 0 every step passed and the project is empty; 1 a step failed or something is left;
2 bad usage or missing environment.`;

/** @param {string} message @returns {never} */
function usageError(message) {
  console.error(`${program}: ${message}\n\n${usage}`);
  process.exit(2);
}

/** @param {string} message */
const log = (message) => console.error(`${program}: ${message}`);

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ target?: string, work: string, steps: string[], to?: string, keep: boolean, printStack: boolean }} */
  const options = { work: path.join(repoRoot, "node_modules", ".cache", "capi-fleet-e2e"), steps, keep: false, printStack: false };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = () => {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) usageError(`${flag} needs a value`);
      i += 1;
      return next;
    };
    if (flag === "--help" || flag === "-h") {
      console.log(usage);
      process.exit(0);
    } else if (flag === "--target") options.target = value();
    else if (flag === "--work") options.work = path.resolve(value());
    else if (flag === "--to") options.to = value();
    else if (flag === "--keep") options.keep = true;
    else if (flag === "--print-stack") options.printStack = true;
    else if (flag === "--steps") {
      options.steps = value().split(",");
      const unknown = options.steps.filter((step) => !steps.includes(step));
      if (unknown.length > 0) usageError(`--steps: unknown ${unknown.join(", ")}; allowed: ${steps.join(", ")}`);
    } else usageError(`unknown argument ${flag}`);
  }
  if (options.target !== "hetzner" && options.target !== "local") usageError(`--target must be hetzner or local${options.target ? ` (got ${JSON.stringify(options.target)})` : ""}`);
  return /** @type {typeof options & { target: "hetzner" | "local" }} */ (options);
}

// The version catalog (TypeScript, as `npm run plan` reads it), imported with tsx, the loader
// scripts/run-ts runs the repository's TypeScript programs with; e2e stays a .mjs that `node` runs.
const { catalog } = /** @type {typeof import("../infra/model/versions/catalog.js")} */ (await tsImport("../infra/model/versions/catalog.ts", import.meta.url));

/** An OpenSSH ed25519 public key whose private half is thrown away (the management servers need one; nobody logs in). */
function throwawaySshKey() {
  const { publicKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const field = (/** @type {Buffer} */ bytes) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(raw)]).toString("base64")} capi-fleet-e2e`;
}

/**
 * The stack's config values and secrets for a target.
 * @param {"hetzner" | "local"} target
 * @returns {{ config: Record<string, unknown>, secrets: Record<string, string>, tokens: string[] }}
 */
function stackFor(target) {
  if (target === "local") {
    const file = process.env.E2E_LOCAL_TARGET;
    if (!file) usageError("--target local needs E2E_LOCAL_TARGET (tests/in-the-loop/tenant-real-up.test.ts writes it)");
    const parsed = /** @type {{ config: Record<string, unknown>, secrets: Record<string, string> }} */ (JSON.parse(readFileSync(file, "utf8")));
    const tokens = Object.entries(parsed.secrets)
      .filter(([key]) => key.startsWith("capi-fleet:tenantHcloudTokens."))
      .map(([, token]) => token);
    return { ...parsed, tokens };
  }
  const token = process.env.HCLOUD_TOKEN;
  const adminCidr = process.env.E2E_ADMIN_CIDR;
  if (!token) usageError("--target hetzner needs HCLOUD_TOKEN (a project used for nothing else)");
  if (!adminCidr) usageError("--target hetzner needs E2E_ADMIN_CIDR (the CIDR you run it from, e.g. 203.0.113.7/32)");
  const versions = catalog.tenantKubernetesVersions;
  return {
    config: {
      "capi-fleet:management": { mode: "hetzner", location: "fsn1", serverType: "cx23", servers: 1, deletionProtection: false, adminCidrs: [adminCidr], sshPublicKey: throwawaySshKey() },
      "capi-fleet:tenants": [
        {
          name: "e2e",
          // One below the newest, so that the upgrade has a minor to go.
          kubernetesVersion: versions.at(-2),
          regions: ["fsn1"],
          controlPlane: { replicas: 1, machineType: "cx33" },
          workers: [{ name: "md-0", replicas: 1, machineType: "cx23", failureDomain: "fsn1" }],
        },
      ],
    },
    secrets: { "hcloud:token": token, "capi-fleet:tenantHcloudTokens.e2e": token },
    tokens: [token],
  };
}

/**
 * @typedef {object} Run
 * @property {string} target
 * @property {string} work
 * @property {string} stack
 * @property {NodeJS.ProcessEnv} env
 * @property {string[]} tokens
 */

/**
 * `pulumi` for the run's stack, from the repository root (where users run it), output streamed.
 * @param {Run} run
 * @param {string[]} args
 * @param {{ configFile?: boolean, quiet?: boolean }} [options]
 */
async function pulumi(run, args, options = {}) {
  const configFile = options.configFile === false ? [] : ["--config-file", path.join(run.work, `Pulumi.${run.stack}.yaml`)];
  // A secret's value is never printed: it is the argument after the key.
  const shown = args.map((arg, index) => (args.includes("--secret") && index === args.length - 1 ? "[secret]" : arg));
  log(`pulumi ${shown.join(" ")}`);
  const child = execFileAsync("pulumi", [...args, "--stack", run.stack, ...configFile], { cwd: repoRoot, env: run.env, maxBuffer: 256 * 1024 * 1024 });
  if (!options.quiet) {
    child.child.stdout?.pipe(process.stderr);
    child.child.stderr?.pipe(process.stderr);
  }
  const { stdout } = await child;
  return stdout;
}

/**
 * The run in `work`: created on the first step, read by later ones.
 * @param {{ target: "hetzner" | "local", work: string }} options
 * @returns {Promise<Run>}
 */
async function openRun(options) {
  const stateFile = path.join(options.work, "run.json");
  mkdirSync(path.join(options.work, "state"), { recursive: true });
  // The tokens come from the target every time (never written down); the passphrase of the
  // throwaway stack's state is kept beside that state, readable by its owner only.
  const { tokens } = stackFor(options.target);
  /** @type {{ stack: string, passphrase: string } | undefined} */
  let saved = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, "utf8")) : undefined;
  const env = { ...process.env, PULUMI_BACKEND_URL: `file://${path.join(options.work, "state")}`, PULUMI_SKIP_UPDATE_CHECK: "true" };
  if (!saved) {
    saved = { stack: `e2e-${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}`, passphrase: randomBytes(24).toString("hex") };
    writeFileSync(stateFile, JSON.stringify(saved), { mode: 0o600 });
  }
  return { target: options.target, work: options.work, stack: saved.stack, env: { ...env, PULUMI_CONFIG_PASSPHRASE: saved.passphrase }, tokens };
}

/** @param {Run} run */
async function up(run) {
  const { config, secrets, tokens } = stackFor(/** @type {"hetzner" | "local"} */ (run.target));
  if (run.target === "hetzner") {
    const before = await leftovers(run, tokens, { quiet: true });
    if (before.length > 0) throw new Error(`the Hetzner project is not empty; use a project for nothing else:\n${before.join("\n")}`);
  }
  const stackFile = path.join(run.work, `Pulumi.${run.stack}.yaml`);
  if (!existsSync(stackFile)) {
    // Created beside a project file of the same name, so the stack file lands in --work, not in stacks/.
    writeFileSync(path.join(run.work, "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
    await execFileAsync("pulumi", ["stack", "init", run.stack], { cwd: run.work, env: run.env });
    writeFileSync(stackFile, `${readFileSync(stackFile, "utf8").trimEnd()}\n${stringify({ config })}`);
    for (const [key, value] of Object.entries(secrets)) await pulumi(run, ["config", "set", "--secret", "--path", key, value], { quiet: true });
  }
  await pulumi(run, ["up", "--yes", "--skip-preview", "--non-interactive"]);
}

/**
 * Polls `check` every `pauseMs` until it returns a value, at most `seconds`.
 * @template T
 * @param {string} what
 * @param {number} seconds
 * @param {() => Promise<T | undefined>} check
 * @returns {Promise<T>}
 */
async function waitFor(what, seconds, check, pauseMs = 2000) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up after ${seconds} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** @param {Run} run @param {string} name @returns {Promise<Record<string, string>>} */
async function outputSecret(run, name) {
  return JSON.parse(await pulumi(run, ["stack", "output", name, "--show-secrets", "--json"], { configFile: false, quiet: true }));
}

/** Every node Ready, and a LoadBalancer Service with an address from the CCM, in each tenant. @param {Run} run */
async function check(run) {
  const minutes = run.target === "hetzner" ? 20 : 2;
  for (const [tenant, kubeconfig] of Object.entries(await outputSecret(run, stackOutputs.tenantKubeconfigs))) {
    const target = parseKubeconfig(kubeconfig, `tenantKubeconfigs.${tenant}`);
    const nodes = await waitFor(`every node of ${tenant} Ready`, minutes * 60, async () => {
      const answer = await kubeRequest(target, "GET", "/api/v1/nodes", { timeoutMs: 15_000 });
      const items = /** @type {{ items?: { metadata: { name: string }, status?: { conditions?: { type: string, status: string }[] } }[] }} */ (answer.json ?? {}).items ?? [];
      const ready = items.filter((node) => node.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"));
      return items.length > 0 && ready.length === items.length ? items.map((node) => node.metadata.name) : undefined;
    });
    log(`${tenant}: ${nodes.length} node(s) Ready: ${nodes.join(", ")}`);
    const servicePath = `/api/v1/namespaces/default/services/${probeService}`;
    const existing = await kubeRequest(target, "GET", servicePath, { timeoutMs: 15_000 });
    if (existing.status === 404) {
      const created = await kubeRequest(target, "POST", "/api/v1/namespaces/default/services", {
        timeoutMs: 15_000,
        body: { apiVersion: "v1", kind: "Service", metadata: { name: probeService }, spec: { type: "LoadBalancer", selector: { app: probeService }, ports: [{ port: 80, targetPort: 8080 }] } },
      });
      if (created.status >= 300) throw new Error(`${tenant}: creating the probe Service: HTTP ${created.status} ${created.reason}`);
    }
    // Left in place: the destroy's load-balancer drain must remove it.
    const address = await waitFor(`${tenant}: an address for Service default/${probeService} from the hcloud CCM`, minutes * 30 * 10, async () => {
      const answer = await kubeRequest(target, "GET", servicePath, { timeoutMs: 15_000 });
      const ingress = /** @type {{ status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }} */ (answer.json ?? {}).status?.loadBalancer?.ingress ?? [];
      return ingress[0]?.ip;
    });
    log(`${tenant}: Service default/${probeService} answered by the CCM at ${address}`);
  }
}

/** @param {Run} run @param {string | undefined} to */
async function upgrade(run, to) {
  const stackFile = path.join(run.work, `Pulumi.${run.stack}.yaml`);
  const tenants = /** @type {{ name: string, namespace?: string, kubernetesVersion: string }[]} */ (
    JSON.parse(await pulumi(run, ["config", "get", "capi-fleet:tenants", "--json"], { quiet: true })).objectValue ?? []
  );
  const tenant = tenants[0];
  if (!tenant) throw new Error(`${stackFile} has no tenant to upgrade`);
  const versions = catalog.tenantKubernetesVersions;
  const minor = (/** @type {string} */ version) => Number(version.split(".")[1]);
  const target = to ?? versions.find((version) => minor(version) === minor(tenant.kubernetesVersion) + 1);
  if (!target) throw new Error(`no listed version one minor above ${tenant.kubernetesVersion} (${versions.join(", ")}); pass --to`);
  log(`upgrading ${tenant.name} from ${tenant.kubernetesVersion} to ${target}`);
  await pulumi(run, ["config", "set", "--path", "capi-fleet:tenants[0].kubernetesVersion", target], { quiet: true });
  await pulumi(run, ["up", "--yes", "--skip-preview", "--non-interactive"]);
  const management = parseKubeconfig(JSON.parse(await pulumi(run, ["stack", "output", stackOutputs.managementKubeconfig, "--show-secrets", "--json"], { configFile: false, quiet: true })), stackOutputs.managementKubeconfig);
  // A tenant's namespace defaults to its name (infra/model/config/fleet-config.ts, tenant `namespace`).
  const namespace = tenant.namespace ?? tenant.name;
  const selector = encodeURIComponent(`cluster.x-k8s.io/cluster-name=${tenant.name}`);
  const minutes = run.target === "hetzner" ? 60 : 5;
  await waitFor(`${tenant.name}: the control plane and every MachineDeployment at ${target}`, minutes * 60, async () => {
    /** @param {string} apiPath @returns {Promise<{ status?: { version?: string }, spec?: { template?: { spec?: { version?: string } } } }[]>} */
    const items = async (apiPath) => /** @type {{ items?: [] }} */ ((await kubeRequest(management, "GET", apiPath, { timeoutMs: 15_000 })).json ?? {}).items ?? [];
    const kcps = await items(`/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/${namespace}/kubeadmcontrolplanes?labelSelector=${selector}`);
    const mds = await items(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${namespace}/machinedeployments?labelSelector=${selector}`);
    const done = kcps.length === 1 && kcps[0]?.status?.version === target && mds.every((md) => md.spec?.template?.spec?.version === target);
    return done ? true : undefined;
  }, 5000);
  if (run.target === "hetzner") {
    // Real machines roll: every node's kubelet reports the target (kwok's nodes in the local target do not).
    const kubeconfigs = await outputSecret(run, stackOutputs.tenantKubeconfigs);
    const workload = parseKubeconfig(/** @type {string} */ (kubeconfigs[tenant.name]), `tenantKubeconfigs.${tenant.name}`);
    await waitFor(`${tenant.name}: every node Ready at ${target}`, minutes * 60, async () => {
      const answer = await kubeRequest(workload, "GET", "/api/v1/nodes", { timeoutMs: 15_000 });
      const nodes = /** @type {{ items?: { status?: { nodeInfo?: { kubeletVersion?: string }, conditions?: { type: string, status: string }[] } }[] }} */ (answer.json ?? {}).items ?? [];
      const done = nodes.length > 0 && nodes.every((node) => node.status?.nodeInfo?.kubeletVersion === target && node.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      return done ? true : undefined;
    }, 10_000);
  }
  log(`${tenant.name}: control plane and workers at ${target}`);
}

/** The runbook's teardown (docs/operations.md, section 15): the protection lifted, then `destroy`. @param {Run} run */
async function destroy(run) {
  await pulumi(run, ["state", "unprotect", "--all", "--yes"], { configFile: false });
  await pulumi(run, ["destroy", "--yes", "--skip-preview", "--non-interactive"]);
  await pulumi(run, ["stack", "rm", "--yes"], { configFile: false });
}

/**
 * What scripts/hcloud-leftovers.mjs lists in each project; empty when every project is empty.
 * @param {Run} run @param {string[]} tokens @param {{ quiet?: boolean }} [options]
 */
async function leftovers(run, tokens, options = {}) {
  const found = [];
  for (const [index, token] of tokens.entries()) {
    try {
      await execFileAsync(process.execPath, [path.join(repoRoot, "scripts", "hcloud-leftovers.mjs")], { env: { ...run.env, HCLOUD_TOKEN: token } });
      if (!options.quiet) log(`project ${index + 1} of ${tokens.length}: empty`);
    } catch (error) {
      const { stderr = "" } = /** @type {{ stderr?: string }} */ (error);
      found.push(`project ${index + 1} of ${tokens.length}:\n${stderr.trim()}`);
    }
  }
  return found;
}

/**
 * The stack file's config: the values, and each secret as a `secure:` placeholder at its path.
 * @param {{ config: Record<string, unknown>, secrets: Record<string, string> }} stack
 */
function stackFileConfig(stack) {
  /** @type {Record<string, any>} */
  const config = JSON.parse(JSON.stringify(stack.config));
  for (const key of Object.keys(stack.secrets)) {
    const [head, ...rest] = key.split(".");
    if (rest.length === 0) config[/** @type {string} */ (head)] = { secure: "v1:placeholder" };
    else config[/** @type {string} */ (head)] = { ...config[/** @type {string} */ (head)], [rest.join(".")]: { secure: "v1:placeholder" } };
  }
  return config;
}

const options = parseArgs(process.argv.slice(2));
if (options.printStack) {
  process.stdout.write(stringify({ config: stackFileConfig(stackFor(options.target)) }));
  process.exit(0);
}
const run = await openRun(options);
log(`stack ${run.stack} (${run.target}), state in ${run.work}`);
let failed = false;
try {
  for (const step of options.steps) {
    const started = Date.now();
    log(`step ${step}`);
    if (step === "up") await up(run);
    else if (step === "check") await check(run);
    else if (step === "upgrade") await upgrade(run, options.to);
    else if (step === "destroy") await destroy(run);
    else if (step === "leftovers") {
      const left = await leftovers(run, run.tokens);
      if (left.length > 0) throw new Error(`left in Hetzner after the destroy (billed until removed):\n${left.join("\n")}`);
    }
    log(`step ${step} passed in ${Math.round((Date.now() - started) / 1000)} s`);
  }
} catch (error) {
  failed = true;
  log(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
  if (options.keep || !options.steps.includes("destroy")) {
    log(`nothing was cleaned up; when done: npm run e2e -- --target ${run.target} --work ${run.work} --steps destroy,leftovers`);
  } else {
    log("cleaning up: pulumi destroy, then the leftovers check");
    await destroy(run).catch((cleanup) => log(`the clean-up destroy failed too: ${String(cleanup)}`));
    const left = await leftovers(run, run.tokens);
    if (left.length > 0) log(`still in Hetzner (delete by hand, e.g. hcloud load-balancer delete <id>, hcloud server delete <id>):\n${left.join("\n")}`);
  }
}
process.exit(failed ? 1 : 0);
