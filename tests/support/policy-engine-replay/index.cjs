// The program tests/in-the-loop/policy-pack-real-engine.test.ts runs through the real Pulumi engine: it
// registers again, in order and with the same types, names, parents, inputs, outputs and
// dependencies, what the fleet's program registered under the test mocks (a JSON file named by
// $CAPI_FLEET_REPLAY), so that the engine shows the policy pack exactly what it shows it for the
// fleet, on a fresh stack:
// - the Kubernetes objects are real resources of the real Kubernetes provider (the version the
//   Go module proxy serves, $CAPI_FLEET_REPLAY_KUBERNETES_VERSION), whose kubeconfig comes from
//   a dynamic resource and is therefore unknown at preview, as on a fresh Hetzner stack;
// - the fleet's components are components with their recorded registered outputs;
// - the StackReference is a real read of this stack's own outputs, and reads of Kubernetes
//   objects are reads with an id unknown at preview, as in the fleet;
// - stand-ins: resources of plugins this workplace cannot build (hcloud, command) and Helm
//   releases (whose preview fetches the chart from its repository) become components with the
//   same type token and inputs, and no outputs.
"use strict";
const fs = require("node:fs");
const pulumi = require("@pulumi/pulumi");

const registrations = JSON.parse(fs.readFileSync(process.env.CAPI_FLEET_REPLAY, "utf8"));
const kubernetesVersion = process.env.CAPI_FLEET_REPLAY_KUBERNETES_VERSION;

// Known only once `up` has created it: at preview the engine has no value for it.
const kubeconfigProvider = {
  async create(inputs) {
    return { id: "management-kubeconfig", outs: { ...inputs, kubeconfig: "apiVersion: v1\nkind: Config\n" } };
  },
};
class ManagementKubeconfig extends pulumi.dynamic.Resource {
  constructor(name) {
    super(kubeconfigProvider, name, { kubeconfig: undefined }, {});
  }
}
const kubeconfig = new ManagementKubeconfig("replay-management-kubeconfig").kubeconfig;

/** The SDK's marker on resource objects recorded among a component's inputs. */
function withoutResourceObjects(value) {
  if (Array.isArray(value)) return value.map(withoutResourceObjects);
  if (typeof value !== "object" || value === null) return value;
  if (value.__pulumiResource === true) return `<resource ${value.__pulumiType} ${value.__name}>`;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutResourceObjects(inner)]));
}

const byUrn = new Map();
// The SDK expands dependsOn on a component into its custom descendants; a component or stand-in
// is depended on through a handle the SDK takes for a custom resource (its markers and URN), so
// the engine records the same dependency edges as for the fleet.
const handle = (urn) => ({ __pulumiResource: true, __pulumiCustomResource: true, urn: pulumi.output(urn) });
const replayed = (urn) => byUrn.get(urn);
const isStandIn = (type) => type.startsWith("hcloud:") || type.startsWith("command:") || type === "kubernetes:helm.sh/v3:Release";

for (const registration of registrations) {
  const { type, name, urn, parent: parentUrn, dependencies, secretInputs } = registration;
  const parent = replayed(parentUrn)?.resource;
  const dependsOn = [...new Set(dependencies)].flatMap((dependency) => {
    const target = replayed(dependency);
    return target ? [target.custom ? target.resource : handle(dependency)] : [];
  });
  const inputs = Object.fromEntries(
    Object.entries(withoutResourceObjects(registration.inputs)).map(([key, value]) => [key, secretInputs.includes(key) ? pulumi.secret(value) : value]),
  );
  const options = { parent, dependsOn };
  if (type === "pulumi:pulumi:Stack") continue;
  if (type === "pulumi:pulumi:StackReference") {
    byUrn.set(urn, { resource: new pulumi.StackReference(name, { name: registration.inputs.name }, { parent }), custom: true });
  } else if (type === "pulumi:providers:kubernetes") {
    const provider = new pulumi.ProviderResource("kubernetes", name, { ...inputs, kubeconfig }, { parent, version: kubernetesVersion });
    byUrn.set(urn, { resource: provider, custom: true });
  } else if (type.startsWith("pulumi:providers:")) {
    continue; // a provider whose plugin is not here: its resources are stand-ins
  } else if (registration.readId && type.startsWith("kubernetes:")) {
    // A read (`Secret.get`) whose id, in the fleet, waits for a command: unknown at a fresh
    // stack's preview, so the engine skips it. The unknown kubeconfig gives the same.
    const provider = replayed(registration.provider.split("::").slice(0, -1).join("::"))?.resource;
    const id = kubeconfig.apply(() => registration.readId);
    byUrn.set(urn, { resource: new pulumi.CustomResource(type, name, {}, { ...options, provider, version: kubernetesVersion, id }), custom: true });
  } else if (registration.custom && type.startsWith("kubernetes:") && !isStandIn(type)) {
    const provider = replayed(registration.provider.split("::").slice(0, -1).join("::"))?.resource;
    const resource = new pulumi.CustomResource(type, name, inputs, { ...options, provider, version: kubernetesVersion });
    byUrn.set(urn, { resource, custom: true });
  } else {
    const component = new pulumi.ComponentResource(type, name, inputs, options);
    component.registerOutputs(registration.custom ? {} : (registration.outputs ?? {}));
    byUrn.set(urn, { resource: component, custom: false });
  }
}
