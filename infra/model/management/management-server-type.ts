/**
 * `management.serverType` once the servers exist. To change a server's type the provider powers it
 * off and calls change_type with `upgrade_disk = !keep_disk` (`keep_disk` defaults to false), and nothing
 * orders the servers (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/server/resource.go,
 * `resourceServerUpdate`), so one update would stop every etcd member at once and grow the disks
 * for good. So the servers ignore the key after creation, each server's type is recorded from its
 * state (a `pulumi up --refresh` after a resize by hand records the new one), and the next run
 * refuses another type before anything is registered.
 */

/** The runbook section that resizes the servers one at a time. */
export const resizeRunbookSection = "docs/operations.md, *Resize the management servers*";

/** The servers' types in a previous `managementServerTypes` output (undefined: none recorded, or malformed). */
export function deployedServerTypesFrom(output: unknown): { serverTypes: ReadonlyMap<string, string> | undefined; ignored: boolean } {
  if (output === undefined || output === null) return { serverTypes: undefined, ignored: false };
  const entries = typeof output === "object" && !Array.isArray(output) ? Object.entries(output as Record<string, unknown>) : [];
  if (entries.length === 0 || !entries.every(([, type]) => typeof type === "string" && type !== "")) return { serverTypes: undefined, ignored: true };
  return { serverTypes: new Map(entries as [string, string][]), ignored: false };
}

/** Why `configured` cannot be applied to servers that run `deployed`, or undefined when they all run it. */
export function serverTypeChangeProblem(deployed: ReadonlyMap<string, string> | undefined, configured: string): string | undefined {
  if (!deployed || [...deployed.values()].every((type) => type === configured)) return undefined;
  const running = [...deployed].sort(([a], [b]) => a.localeCompare(b));
  const types = [...new Set(running.map(([, type]) => type))];
  return (
    `${JSON.stringify(configured)} differs from the type the servers run (${running.map(([server, type]) => `${server}: ${type}`).join(", ")}), ` +
    `and Pulumi does not resize running servers: the provider would power off every server at once to change its type and grow its disk for good; ` +
    `keep ${types.length === 1 ? JSON.stringify(types[0]) : "the type they run"}, resize them one at a time by hand and record it with \`pulumi up --refresh\` ` +
    `(${resizeRunbookSection}), then set the new type`
  );
}
