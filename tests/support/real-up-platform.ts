import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { platformNamespaces } from "../../infra/model/platform/platform-namespaces";
import { catalog } from "../../infra/model/versions/catalog";
import { capiBinaries } from "./capi-in-the-loop";
import { carenDiscoveredVariables, readCarenSchemas } from "./caren-variables";
import { fluxOperatorChartSource, managementChartSources, startChartMirror, type ChartMirror } from "./chart-mirror";
import { startCertManagerStandIn, type CertManagerStandIn } from "./fakes/cert-manager";
import { carenBinaryEnv } from "./caren-in-the-loop";
import { runHostControllers, type HostControllers, type HostControllerSpec } from "./host-controllers";
import { adminKubeconfig, installedBinary, kubeApiServerBinaries, runToolchain, startKubeApiServer, type KubeApiServer, type KubeApiServerBinaries } from "./kube-apiserver";
import { startSimulatedCluster, type SimulatedCluster } from "./kwok-cluster";
import { offlineEngineScratch } from "./legacy-policy-pack";
import { sdkPluginVersion, writeCommandPluginStandIn } from "./plugins";
import { startProviderMirror, type ProviderMirror } from "./provider-mirror";
import { carenHandlers, startRecordingExtension } from "./recording-extension";
import { clusterIpLookup, startServiceEgress, type ServiceEgress } from "./service-egress";
import { repoRoot } from "./stack-files";

/**
 * The management cluster and engine that `pulumi up` runs against in the real-engine suites
 * (tests/in-the-loop/real-up.test.ts, tests/in-the-loop/tenant-real-up.test.ts): the toolchain's Pulumi CLI 3.248.0 and the
 * real Kubernetes provider 4.25.0 (the version the SDK asks for), an offline engine scratch
 * directory, and a management cluster that is:
 * - kube-apiserver and etcd, kube-controller-manager and kube-scheduler (one Kubernetes build), and
 *   kwok for one node and its pods, so that Deployments become available and Helm's wait and the
 *   operator's health checks pass (tests/support/kwok-cluster.ts);
 * - the real cluster-api-operator v<catalog>, CAPI's three managers and the Flux Operator as host
 *   processes, their webhooks reached through the API server's egress (tests/support/service-egress.ts,
 *   tests/support/host-controllers.ts); the Flux Operator installs Flux from the distributions its module
 *   carries (config/data, what its image holds at /data), so Flux's Deployments run on kwok;
 * - STAND-INS, named: cert-manager's running parts (tests/support/fakes/cert-manager.ts; its chart is real),
 *   allow-all webhooks for CAPH and CAAPH (their managers are not built here), CAREN as the
 *   recording extension with CAREN's own variable schemas (tests/support/recording-extension.ts) and
 *   allow-all admission webhooks (so CAREN's defaults are not applied to a Cluster) unless
 *   CAPI_FLEET_CAREN_BIN names a real manager (then that runs, with the deployed chart's args), the
 *   command plugin unless CAPI_FLEET_COMMAND_PLUGIN names a real one (tests/support/fakes/command-plugin.mjs),
 *   and the Flux Operator's chart (tests/support/chart-mirror.ts, fluxOperatorChartSource).
 * Charts come from a local Helm repository packaged from the unmodified chart sources
 * (tests/support/chart-mirror.ts) and the providers from a local OCI mirror built from their sources
 * (tests/support/provider-mirror.ts), through the stack's `mirrors` setting: nothing comes from outside.
 */

const execFileAsync = promisify(execFile);
const toolchain = path.join(repoRoot, "tools", "toolchain");
const scratchRoot = path.join(repoRoot, "node_modules", ".cache", "real-up");
export const buildTimeoutMs = 50 * 60_000;
/** The stack's images mirror: a registry nothing pulls from (kwok runs no images), so each Pod's spec shows where it would pull. */
export const imagesMirror = "registry.mirror.test/platform";
/** A Node.js language host built by hand from the CLI's release tag (the proxy refuses its module). */
export const pinnedHostEnv = "CAPI_FLEET_NODEJS_LANGUAGE_HOST";
/** A command plugin built by hand from its release tag (the proxy refuses its module). */
export const commandPluginEnv = "CAPI_FLEET_COMMAND_PLUGIN";

export interface Run {
  code: number;
  /** stdout and stderr. */
  output: string;
  /** stdout alone (`--json` output). */
  stdout?: string;
}

/** A plugin the engine takes from $PULUMI_HOME (bin/ is on PATH, so it is installed, not linked there). */
export interface PluginFile {
  name: string;
  version: string;
  file: string;
}

export interface RealUpPlatform {
  /** The scratch directory: bin/, home/, state/ and the stack files. */
  readonly scratch: string;
  /** The engine's environment: offline, file backend, its PATH and PULUMI_HOME. */
  readonly env: NodeJS.ProcessEnv;
  readonly server: KubeApiServer;
  readonly binaries: KubeApiServerBinaries;
  readonly kubectl: string;
  readonly charts: ChartMirror;
  readonly providers: ProviderMirror;
  readonly cluster: SimulatedCluster;
  readonly egress: ServiceEgress;
  readonly controllers: HostControllers;
  /** The toolchain's pins (its language host module and pin among them). */
  readonly pins: string;
  /** The admin kubeconfig of the management cluster. */
  readonly kubeconfig: string;
  /** Creates `stack` with these config values (in the scratch directory, not the repository's stacks/) and its secret management kubeconfig. */
  initStack(stack: string, config: Record<string, unknown>): Promise<void>;
  /** The stack file of `stack`. */
  stackFile(stack: string): string;
  /** `pulumi <args> --stack <stack> [--config-file <its file>]`, from the repository root as a user runs it. */
  pulumi(stack: string, args: readonly string[], extraEnv?: NodeJS.ProcessEnv): Promise<Run>;
  /** The last lines of every process's log, for a failed assertion. */
  diagnostics(): string;
  stop(): Promise<void>;
}

const carenName = "cluster-api-runtime-extensions-nutanix";
const carenRuntimeHooks = { servingSecret: `${platformNamespaces.caren}/${carenName}-runtimehooks-tls`, webhookService: `${carenName}-runtimehooks.${platformNamespaces.caren}` };
/** CAREN's admission webhooks are its other Service, on the same port (its chart v0.50.0: templates/admission-service.yaml, webhooks.yaml). */
const carenAdmissionService = `${carenName}-admission.${platformNamespaces.caren}`;

/**
 * CAREN: the real manager when CAPI_FLEET_CAREN_BIN names one built from the catalog's tag, run with
 * the args of the Deployment the program's Helm release created; otherwise the recording extension
 * with CAREN's own variable schemas and admission webhooks that allow every review (stand-ins).
 */
function carenControllers(schemas: Parameters<typeof carenDiscoveredVariables>[0]): HostControllerSpec[] {
  const binary = process.env[carenBinaryEnv];
  if (binary) {
    if (!existsSync(binary)) throw new Error(`${carenBinaryEnv}=${binary}: no such file`);
    return [
      {
        name: "caren",
        binary,
        ...carenRuntimeHooks,
        alsoServes: [carenAdmissionService],
        deployedArgs: { deployment: `${platformNamespaces.caren}/${carenName}`, container: "manager" },
        args: (kubeconfig, certDir, port, deployed) => [
          ...deployed.map((arg) => (arg.startsWith("--webhook-cert-dir=") ? `--webhook-cert-dir=${certDir}` : arg.replaceAll("$(POD_NAMESPACE)", platformNamespaces.caren))),
          `--kubeconfig=${kubeconfig}`,
          `--webhook-port=${port}`,
          "--health-probe-bind-address=127.0.0.1:0",
          "--metrics-bind-address=0",
        ],
        env: { POD_NAMESPACE: platformNamespaces.caren },
      },
    ];
  }
  return [
    { name: "caren (stand-in: the recording extension)", ...carenRuntimeHooks, serve: (tls) => startRecordingExtension(carenHandlers(), carenDiscoveredVariables(schemas), tls) },
    { name: "caren-admission (stand-in: allows every review)", servingSecret: carenRuntimeHooks.servingSecret, webhookService: carenAdmissionService },
  ];
}

/** Starts the management cluster and prepares the engine; `plugins` are installed besides kubernetes and command. */
export async function startRealUpPlatform(name: string, plugins: readonly PluginFile[] = []): Promise<RealUpPlatform> {
  const kubernetesVersion = sdkPluginVersion("kubernetes");
  await execFileAsync(toolchain, ["build", "cli", `kubernetes@${kubernetesVersion}`], { cwd: repoRoot, timeout: buildTimeoutMs, maxBuffer: 16 * 1024 * 1024 });
  const pins = (await execFileAsync(toolchain, ["pins"], { cwd: repoRoot })).stdout;
  const cache = /^cache: (.+)$/m.exec(pins)?.[1] ?? "";
  const kubernetesPlugin = (await execFileAsync(toolchain, ["plugin-path", `kubernetes@${kubernetesVersion}`], { cwd: repoRoot })).stdout.trim();
  const { scratch, env } = offlineEngineScratch(repoRoot, scratchRoot, cache, name);
  const stopping: (() => Promise<void>)[] = [
    () => {
      rmSync(scratch, { recursive: true, force: true });
      return Promise.resolve();
    },
  ];
  const stop = async () => {
    for (const step of stopping.reverse()) await step().catch((error: unknown) => { console.error(`stopping ${name}: ${String(error)}`); });
  };
  try {
    const pinnedHost = process.env[pinnedHostEnv];
    if (pinnedHost) {
      if (!existsSync(pinnedHost)) throw new Error(`${pinnedHostEnv}=${pinnedHost}: no such file`);
      // The engine prefers a language host on PATH to the one beside the CLI (and says so).
      symlinkSync(pinnedHost, path.join(scratch, "bin", "pulumi-language-nodejs"));
    }
    const realCommand = process.env[commandPluginEnv];
    if (realCommand && !existsSync(realCommand)) throw new Error(`${commandPluginEnv}=${realCommand}: no such file`);
    for (const plugin of [
      { name: "kubernetes", version: kubernetesVersion, file: kubernetesPlugin },
      // Outside PATH (bin/ is on it): the engine takes the plugin from $PULUMI_HOME only.
      { name: "command", version: sdkPluginVersion("command"), file: realCommand ?? writeCommandPluginStandIn(scratch) },
      ...plugins,
    ]) {
      await execFileAsync("pulumi", ["plugin", "install", "resource", plugin.name, plugin.version, "--file", plugin.file], { cwd: scratch, env });
    }
    const binaries = await kubeApiServerBinaries(buildTimeoutMs);
    const kubectl = /^KUBECTL=(.+)$/m.exec(await runToolchain(["paths"], buildTimeoutMs))?.[1];
    if (!kubectl) throw new Error("tools/kube-apiserver-toolchain paths printed no KUBECTL");
    const operator = await installedBinary(`sigs.k8s.io/cluster-api-operator/cmd@v${catalog.clusterApiOperator.chart.version}`, "cluster-api-operator", buildTimeoutMs);
    const capi = await capiBinaries(buildTimeoutMs);
    const fluxTools = (await execFileAsync(path.join(repoRoot, "tools", "flux-toolchain"), ["operator"], { cwd: repoRoot, timeout: buildTimeoutMs, maxBuffer: 16 * 1024 * 1024 })).stdout;
    const fluxOperator = /^FLUX_OPERATOR=(.+)$/m.exec(fluxTools)?.[1];
    const fluxOperatorModule = /^FLUX_OPERATOR_MODULE_DIR=(.+)$/m.exec(fluxTools)?.[1];
    if (!fluxOperator || !fluxOperatorModule) throw new Error(`tools/flux-toolchain operator printed no FLUX_OPERATOR or FLUX_OPERATOR_MODULE_DIR:\n${fluxTools}`);

    const egress = await startServiceEgress({ holdMs: 8000 });
    stopping.push(() => egress.stop());
    const server = await startKubeApiServer(binaries, 90_000, name, undefined, [`--egress-selector-config-file=${egress.configFile}`]);
    stopping.push(() => server.stop());
    egress.lookup = clusterIpLookup(server);
    const cluster = await startSimulatedCluster(server, buildTimeoutMs);
    stopping.push(() => cluster.stop());
    const certManager: CertManagerStandIn = await startCertManagerStandIn(server, egress);
    stopping.push(() => certManager.stop());
    const charts = await startChartMirror([...managementChartSources(kubectl), fluxOperatorChartSource(kubectl, fluxOperatorModule, scratch)]);
    stopping.push(() => charts.stop());
    const providers = await startProviderMirror(kubectl);
    stopping.push(() => providers.stop());

    const capiArgs = (gates: string) => (kubeconfig: string, certDir: string, port: number) => [
      `--kubeconfig=${kubeconfig}`,
      `--webhook-port=${port}`,
      `--webhook-cert-dir=${certDir}`,
      "--health-addr=127.0.0.1:0",
      "--diagnostics-address=0",
      "--leader-elect=false",
      ...(gates ? [`--feature-gates=${gates}`] : []),
    ];
    // The managers call CAREN's Service through the egress proxy; their API server is on loopback.
    const capiEnv = { CAPI_WEBHOOK_HOST: "127.0.0.1", HTTPS_PROXY: egress.proxyUrl, NO_PROXY: "127.0.0.1,localhost" };
    const carenSchemas = readCarenSchemas();
    if (!("crds" in carenSchemas)) throw new Error(`CAREN's variable schemas: ${carenSchemas.unavailable}`);
    const controllers = runHostControllers(server, adminKubeconfig(server), egress, [
      {
        name: "cluster-api-operator",
        binary: operator.path,
        servingSecret: "capi-operator-system/capi-operator-webhook-service-cert",
        webhookService: "capi-operator-webhook-service.capi-operator-system",
        args: (kubeconfig, certDir, port) => [`--kubeconfig=${kubeconfig}`, `--webhook-port=${port}`, `--webhook-cert-dir=${certDir}`, "--health-addr=127.0.0.1:0", "--diagnostics-address=127.0.0.1:0", "--insecure-diagnostics=true", "--watch-configsecret", "--leader-elect=false"],
      },
      { name: "capi", binary: capi.capiManager, servingSecret: "capi-system/capi-webhook-service-cert", webhookService: "capi-webhook-service.capi-system", args: capiArgs("ClusterTopology=true,RuntimeSDK=true"), env: capiEnv },
      {
        name: "kubeadm-bootstrap",
        binary: capi.kubeadmBootstrapManager,
        servingSecret: "capi-kubeadm-bootstrap-system/capi-kubeadm-bootstrap-webhook-service-cert",
        webhookService: "capi-kubeadm-bootstrap-webhook-service.capi-kubeadm-bootstrap-system",
        args: capiArgs(""),
        env: capiEnv,
      },
      {
        name: "kubeadm-control-plane",
        binary: capi.kubeadmControlPlaneManager,
        servingSecret: "capi-kubeadm-control-plane-system/capi-kubeadm-control-plane-webhook-service-cert",
        webhookService: "capi-kubeadm-control-plane-webhook-service.capi-kubeadm-control-plane-system",
        args: capiArgs("ClusterTopology=true"),
        env: capiEnv,
      },
      { name: "caph-webhooks (stand-in)", servingSecret: "caph-system/caph-webhook-server-cert", webhookService: "caph-webhook-service.caph-system" },
      { name: "caaph-webhooks (stand-in)", servingSecret: "caaph-system/webhook-server-cert", webhookService: "caaph-webhook-service.caaph-system" },
      {
        name: "flux-operator",
        binary: fluxOperator,
        // Its own flags: no leader election, metrics, health endpoint or web UI; the distributions from its module (its image's /data).
        args: () => ["--enable-leader-election=false", "--metrics-addr=0", "--health-addr=0", "--web-server-port=0", `--storage-path=${path.join(fluxOperatorModule, "config", "data")}`],
        env: { RUNTIME_NAMESPACE: platformNamespaces.flux },
      },
      ...carenControllers(carenSchemas.crds),
    ]);
    stopping.push(() => controllers.stop());

    const stackFile = (stack: string) => path.join(scratch, `Pulumi.${stack}.yaml`);
    const pulumi = async (stack: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> => {
      try {
        // `stack …` commands take no --config-file.
        const configFile = args[0] === "stack" ? [] : ["--config-file", stackFile(stack)];
        const { stdout, stderr } = await execFileAsync("pulumi", [...args, "--stack", stack, ...configFile], { cwd: repoRoot, env: { ...env, ...extraEnv }, timeout: 1_200_000, maxBuffer: 64 * 1024 * 1024 });
        return { code: 0, output: stdout + stderr, stdout };
      } catch (error) {
        const { code, stdout = "", stderr = "" } = error as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof code === "number" ? code : 1, output: stdout + stderr, stdout };
      }
    };
    // Each stack is created from a scratch project of the same name, so that its file (with the
    // passphrase's salt) lands in the scratch directory, not in the repository's stacks/.
    writeFileSync(path.join(scratch, "Pulumi.yaml"), "name: capi-fleet\nruntime: nodejs\n");
    const initStack = async (stack: string, config: Record<string, unknown>) => {
      await execFileAsync("pulumi", ["stack", "init", stack], { cwd: scratch, env });
      const salt = readFileSync(stackFile(stack), "utf8").trimEnd();
      writeFileSync(stackFile(stack), `${salt}\n${stringify({ config })}`);
      const set = await pulumi(stack, ["config", "set", "--secret", "capi-fleet:managementKubeconfig", adminKubeconfig(server)]);
      if (set.code !== 0) throw new Error(`pulumi config set managementKubeconfig: ${set.output}`);
    };
    return {
      scratch,
      env,
      server,
      binaries,
      kubectl,
      charts,
      providers,
      cluster,
      egress,
      controllers,
      pins,
      kubeconfig: adminKubeconfig(server),
      initStack,
      stackFile,
      pulumi,
      diagnostics: () => [cluster.logs(), controllers.logs(), `egress: ${JSON.stringify(egress.connects.slice(-20))}`].join("\n"),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
