import * as pulumi from "@pulumi/pulumi";

/**
 * The resources a component was told to wait for (`opts.dependsOn`). Pulumi does not pass a
 * component's dependsOn on to its children, so each component hands this list to the
 * children that start its work. Only plain resources are accepted: an Output here would
 * hide the ordering from review and from tests.
 */
export function upstreamOf(opts: pulumi.ComponentResourceOptions | undefined): pulumi.Resource[] {
  const dependsOn = opts?.dependsOn;
  if (dependsOn === undefined) {
    return [];
  }
  const list = Array.isArray(dependsOn) ? dependsOn : [dependsOn];
  return list.map((entry) => {
    if (!pulumi.Resource.isInstance(entry)) {
      throw new Error("components take dependsOn as a list of resources, not as an Output");
    }
    return entry;
  });
}
