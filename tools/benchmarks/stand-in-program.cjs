// The stand-in program of `npm run bench` part 4 (tools/benchmarks/stand-in.ts): the fleet's
// recorded registrations as components, from the plan named by $CAPI_FLEET_STAND_IN_PLAN.
"use strict";
const fs = require("node:fs");
const pulumi = require("@pulumi/pulumi");

const plan = JSON.parse(fs.readFileSync(process.env.CAPI_FLEET_STAND_IN_PLAN, "utf8"));
// The SDK turns dependsOn on a component into the component's custom descendants, and
// stand-ins have none: each is depended on through a handle the SDK takes for a custom resource
// (its markers and URN), so the engine records the same dependency edges as for the real ones.
const components = [];
const handles = [];
for (const entry of plan.entries) {
  const component = new pulumi.ComponentResource(entry.type, entry.name, entry.inputs, { dependsOn: entry.dependsOn.map((index) => handles[index]) });
  components.push(component);
  handles.push({ __pulumiResource: true, __pulumiCustomResource: true, urn: component.urn });
}
// What the fleet's components registered, with their children's stand-in URNs; nothing for the rest.
plan.entries.forEach((entry, index) => {
  const declared = (entry.outputs?.declared ?? []).map(({ entry: child, props }) => components[child].urn.apply((urn) => ({ urn, props })));
  components[index].registerOutputs(entry.outputs ? { ...entry.outputs.other, declared: pulumi.all(declared) } : {});
});
