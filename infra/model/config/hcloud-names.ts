// Warnings for hcloud server types and images outside the catalog's lists, which only
// Hetzner's API can confirm.
import { catalog } from "../versions/catalog";
import type { FleetSettings } from "./fleet-config";
import type { ConfigProblem } from "./stack-config";
import { formatValue } from "./text";

/**
 * Server types and images can only be confirmed by Hetzner's API; names outside the catalog's
 * lists are warnings (a new server type, a snapshot or a CAPH image label can be fine). The two
 * checks push into `warnings`.
 */
function hcloudNameChecks(warnings: ConfigProblem[]) {
  const serverTypes: readonly string[] = catalog.hcloud.serverTypes;
  const images: readonly string[] = catalog.hcloud.systemImages;
  return {
    serverType: (path: string, value: string) => {
      if (!serverTypes.includes(value)) {
        warnings.push({
          path,
          message: `${formatValue(value)} is not an hcloud server type this release knows (catalog.ts hcloud.serverTypes); Hetzner's API decides: check \`hcloud server-type list\` and that it is offered in the location`,
        });
      }
    },
    image: (path: string, value: string) => {
      if (!images.includes(value)) {
        warnings.push({
          path,
          message: `${formatValue(value)} is not a system image this release knows (${images.join(", ")}); fine if it names your own snapshot or image label, otherwise servers will not be created`,
        });
      }
    },
  };
}

/** {@link hcloudNameChecks} for the management servers and every tenant. */
export function hcloudNameWarnings(settings: FleetSettings): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  const { serverType, image } = hcloudNameChecks(warnings);
  const management = settings.management;
  if (management.mode === "hetzner") {
    serverType("management.serverType", management.serverType);
    image("management.image", management.image);
  }
  return [...warnings, ...tenantNameWarnings(settings.tenants)];
}

/** {@link hcloudNameChecks} for the tenants' server types and images. */
export function tenantNameWarnings(tenants: FleetSettings["tenants"]): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  const { serverType, image } = hcloudNameChecks(warnings);
  tenants.forEach((tenant, index) => {
    const at = `tenants[${index}]`;
    serverType(`${at}.controlPlane.machineType`, tenant.controlPlane.machineType);
    image(`${at}.image`, tenant.image);
    tenant.workers.forEach((pool, poolIndex) => {
      serverType(`${at}.workers[${poolIndex}].machineType`, pool.machineType);
      if (pool.image !== undefined) {
        image(`${at}.workers[${poolIndex}].image`, pool.image);
      }
    });
  });
  return warnings;
}
