import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import { commandWorkingDirectory, enginePwd } from "./engine-pwd";

const execFileAsync = promisify(execFile);

/** One resource registration as the mocks saw it. */
export interface Registration {
  type: string;
  name: string;
  /** Inputs with secret wrappers removed. */
  inputs: Record<string, unknown>;
  /** Top-level input names that arrived as secrets. */
  secretInputs: string[];
  custom: boolean;
  /** The resource's URN as the mock monitor computes it. */
  urn: string;
  /** URN of the parent ("" for top-level resources). */
  parent: string;
  /**
   * URNs this registration waits for: explicit `dependsOn` (a component expands to its
   * descendants) plus resources whose outputs flow into its inputs.
   */
  dependencies: string[];
  /** Provider reference (`<provider urn>::<id>`), "" when the default provider is used. */
  provider: string;
  /** The `customTimeouts.delete` option ("" when unset). */
  deleteTimeout: string;
  /** The `protect` option as the engine receives it (inherited from the parent when unset). */
  protect: boolean;
  /** What the mock returned as the resource's state (its outputs): inputs plus fake computed values. */
  state?: Record<string, unknown>;
  /** A component's registered outputs (`registerOutputs`), secrets unwrapped; undefined until registered. */
  outputs?: Record<string, unknown>;
  /** For a read (`<Resource>.get(name, id)`, a StackReference): the id read; never deleted by Pulumi. */
  readId?: string;
  /** Names of the resource hooks bound to it, by when they run (resource.proto ResourceHooksBinding). */
  hooks: { beforeCreate: string[]; beforeUpdate: string[] };
}

/** What the engine receives besides the inputs (resource.proto RegisterResourceRequest). */
interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getProvider(): string;
  getDependenciesList(): string[];
  getCustomtimeouts(): { getDelete(): string } | undefined;
  getProtect(): boolean | undefined;
  getPropertydependenciesMap(): { forEach(callback: (value: { getUrnsList(): string[] }, key: string) => void): void };
  getHooks(): { getBeforeCreateList(): string[]; getBeforeUpdateList(): string[] } | undefined;
}

/** What the engine receives for a read (resource.proto ReadResourceRequest). */
interface ReadRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getProvider(): string;
  getDependenciesList(): string[];
}

interface MockMonitorInternals {
  newUrn(parent: string, type: string, name: string): string;
  registerResource(request: RegisterRequest, callback: unknown): Promise<void>;
  readResource(request: ReadRequest, callback: unknown): Promise<void>;
  registerResourceOutputs(request: { getUrn(): string; getOutputs(): { toJavaScript(): Record<string, unknown> } | undefined }, callback: unknown): void;
  registerResourceHook?: (request: unknown, callback: (error: Error | null, response: unknown) => void) => void;
}

/** The wire marker Pulumi puts on secret values (sdk/nodejs/runtime/rpc.ts). */
const secretSignature = "1b47061264138c4ac30d75fd1eb44270";
const signatureKey = "4dabf18193072939515e22adb298388d";

function isSecretWrapper(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)[signatureKey] === secretSignature;
}

function unwrapSecrets(value: unknown): unknown {
  if (isSecretWrapper(value)) return unwrapSecrets(value.value);
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, unwrapSecrets(inner)]));
  }
  return value;
}

/** Fake provider-computed outputs, by type token, so dependent applies resolve. */
function computedState(type: string, index: number): Record<string, unknown> {
  switch (type) {
    case "hcloud:index/loadBalancer:LoadBalancer":
      return { ipv4: "203.0.113.10", ipv6: "2001:db8::10" };
    case "hcloud:index/server:Server":
      return { ipv4Address: `198.51.100.${20 + index}` };
    default:
      return {};
  }
}

/**
 * The live objects reads find, by `<type token>::<id>`; a test sets or changes them between
 * runs, as the cluster would between two `pulumi up`s.
 */
export const liveObjects = new Map<string, Record<string, unknown>>();

/** What a read of `type` with `id` finds: a live object a test set, or a stand-in. */
function readState(type: string, id: string): Record<string, unknown> {
  const live = liveObjects.get(`${type}::${id}`);
  if (live) return live;
  const [namespace, name = ""] = id.split("/");
  if (type === "kubernetes:core/v1:Secret" && name.endsWith("-kubeconfig")) {
    // The Secret Cluster API writes for a workload cluster (key `value`).
    const kubeconfig = `# stand-in kubeconfig of cluster ${namespace}/${name.slice(0, -"-kubeconfig".length)}\n`;
    return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, data: { value: Buffer.from(kubeconfig).toString("base64") } };
  }
  return {};
}

/** A promise that rejects with the first failed registration of the current mocks (never resolves). */
function newFailure(): { promise: Promise<never>; reject: (error: Error) => void } {
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<never>((_, rejectWith) => (reject = rejectWith));
  promise.catch(() => undefined); // handled by whoever races it; not an unhandled rejection otherwise
  return { promise, reject };
}
let failure = newFailure();

/** Rejects with the first registration that failed under the current mocks; race it against a program run. */
export const mockFailure = (): Promise<never> => failure.promise;

/**
 * Installs Pulumi mocks that record every registration. Invokes fail loudly: the
 * program must not call data sources (they need the Hetzner API, even in preview).
 */
export async function installRecordingMocks(
  project: string,
  stack: string,
  preview = false,
  /** Outputs a StackReference sees (the program reads its own stack's last outputs). */
  stackOutputs: Record<string, unknown> = {},
): Promise<Registration[]> {
  const registrations: Registration[] = [];
  // The program runs where the engine would run it (`main`'s directory), so what it derives from
  // its working directory (a local command's `dir`) is what a real `up` registers.
  process.chdir(enginePwd());
  failure = newFailure();
  const graph = new Map<string, Pick<Registration, "urn" | "parent" | "dependencies" | "provider" | "deleteTimeout" | "protect" | "hooks">>();
  let counter = 0;
  await pulumi.runtime.setMocks(
    {
      async newResource(args) {
        counter += 1;
        const rawInputs = args.inputs as Record<string, unknown>;
        const inputs = unwrapSecrets(rawInputs) as Record<string, unknown>;
        const secretInputs = Object.keys(rawInputs).filter((key) => isSecretWrapper(rawInputs[key]));
        const edges = graph.get(`${args.type}::${args.name}`) ?? { urn: "", parent: "", dependencies: [], provider: "", deleteTimeout: "", protect: false, hooks: noHooks() };
        // A read carries its id; a registration only an import id ("" here).
        const readId = args.id ? args.id : undefined;
        const registration: Registration = { type: args.type, name: args.name, inputs, secretInputs, custom: args.custom ?? true, ...edges, ...(readId ? { readId } : {}) };
        registrations.push(registration);
        const sameType = registrations.filter((r) => r.type === args.type).length;
        const state = { ...inputs, ...computedState(args.type, sameType), ...(readId ? readState(args.type, readId) : {}) };
        registration.state = state;
        if (args.type === "command:local:Command") {
          try {
            state.stdout = await runLocalCommand(inputs);
          } catch (error) {
            // The SDK logs a failed registration and leaves its outputs unresolved; runStack waits on this instead.
            failure.reject(new Error(`local command ${args.name} failed: ${(error as Error).message}`));
            throw error;
          }
        }
        if (args.type === "pulumi:pulumi:StackReference") {
          state.outputs = stackOutputs;
        }
        return { id: String(1000 + counter), state };
      },
      call(args) {
        throw new Error(`unexpected invoke ${args.token}: the program must not call data sources`);
      },
    },
    project,
    stack,
    preview,
    // The file backend's organization: the program names its own stack with it.
    "organization",
  );
  // The mocks API hands newResource only type, name and inputs; the dependency graph is on
  // the request, so record it from the monitor before the mock runs.
  const monitor = pulumi.runtime.getMonitor() as unknown as MockMonitorInternals;
  const registerResource = monitor.registerResource.bind(monitor);
  monitor.registerResource = (request, callback) => {
    const dependencies = new Set(request.getDependenciesList());
    request.getPropertydependenciesMap().forEach((value) => {
      for (const urn of value.getUrnsList()) dependencies.add(urn);
    });
    graph.set(`${request.getType()}::${request.getName()}`, {
      urn: monitor.newUrn(request.getParent(), request.getType(), request.getName()),
      parent: request.getParent(),
      dependencies: [...dependencies],
      provider: request.getProvider(),
      deleteTimeout: request.getCustomtimeouts()?.getDelete() ?? "",
      protect: request.getProtect() ?? false,
      hooks: { beforeCreate: request.getHooks()?.getBeforeCreateList() ?? [], beforeUpdate: request.getHooks()?.getBeforeUpdateList() ?? [] },
    });
    return registerResource(request, callback);
  };
  const readResource = monitor.readResource.bind(monitor);
  monitor.readResource = (request, callback) => {
    graph.set(`${request.getType()}::${request.getName()}`, {
      urn: monitor.newUrn(request.getParent(), request.getType(), request.getName()),
      parent: request.getParent(),
      dependencies: request.getDependenciesList(),
      provider: request.getProvider(),
      deleteTimeout: "",
      protect: false,
      hooks: noHooks(),
    });
    return readResource(request, callback);
  };
  // SDK 3.248's mock monitor lacks the hook registration its mocks claim to support; the engine
  // only records a hook's name and calls it back at the step, which no mocked run reaches.
  monitor.registerResourceHook = (_request, callback) => {
    callback(null, {});
  };
  // Components' registerOutputs: what the engine hands stack rules for them.
  const registerResourceOutputs = monitor.registerResourceOutputs.bind(monitor);
  monitor.registerResourceOutputs = (request, callback) => {
    const registration = registrations.find((candidate) => candidate.urn === request.getUrn());
    if (registration) registration.outputs = unwrapSecrets(request.getOutputs()?.toJavaScript() ?? {}) as Record<string, unknown>;
    registerResourceOutputs(request, callback);
  };
  return registrations;
}

function noHooks(): Registration["hooks"] {
  return { beforeCreate: [], beforeUpdate: [] };
}

/**
 * Runs the PKI script the way the command provider would (in the command's `dir`, resolved from
 * the directory the engine starts the plugin in, with the resource's environment), so the PKI in
 * tests is real; other commands print nothing.
 */
async function runLocalCommand(inputs: Record<string, unknown>): Promise<string> {
  const create = typeof inputs.create === "string" ? inputs.create : "";
  if (!create.startsWith("node scripts/management-pki.mjs ")) {
    return "";
  }
  const environment = (inputs.environment ?? {}) as Record<string, string>;
  const { stdout } = await execFileAsync(process.execPath, create.split(" ").slice(1), {
    cwd: commandWorkingDirectory(inputs),
    env: { ...process.env, ...environment },
  });
  return stdout;
}

/** Resolves an output's value (mocks resolve everything eventually). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => {
    output.apply((value) => {
      resolve(value);
    });
  });
}

/** Waits until the mocks have seen every registration the program queued. */
export async function settle(registrations: Registration[]): Promise<void> {
  let stableRounds = 0;
  let seen = -1;
  while (stableRounds < 5) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    stableRounds = registrations.length === seen ? stableRounds + 1 : 0;
    seen = registrations.length;
  }
}

/** Counts registrations by type token. */
export function countByType(registrations: readonly Registration[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { type } of registrations) {
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}
