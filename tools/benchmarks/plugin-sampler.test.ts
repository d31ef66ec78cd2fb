import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { pluginNameOf, sampleTree, startPluginSampler } from "./plugin-sampler";
import { chunks, declaredPlatformOf } from "./scale";
import { componentTypes } from "../../infra/model/contract/component-types";

// The bench's plugin sampler (scale mode) on real processes: a shell whose children pose as
// resource plugins by their argv[0], as the engine starts them (pulumi-resource-<name>).

describe("the plugin sampler", () => {
  it("finds every pulumi-resource-* descendant with its RSS, and keeps the peaks per plugin", async () => {
    const shell = spawn("bash", ["-c", "(exec -a pulumi-resource-hcloud sleep 5) & (exec -a pulumi-resource-hcloud sleep 5) & (exec -a pulumi-resource-command sleep 5) & wait"], { stdio: "ignore" });
    try {
      const root = shell.pid!;
      await new Promise((resolve) => setTimeout(resolve, 500));
      const tree = sampleTree(root);
      expect(tree.filter((entry) => entry.plugin === "hcloud")).toHaveLength(2);
      expect(tree.filter((entry) => entry.plugin === "command")).toHaveLength(1);
      expect(tree.every((entry) => entry.rssBytes > 0)).toBe(true);
      expect(pluginNameOf(root)).toBeUndefined();
      const sampler = startPluginSampler(root, 50);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const peak = sampler.stop();
      expect(peak.processes).toBe(3);
      expect(peak.byPlugin.hcloud?.processes).toBe(2);
      expect(peak.byPlugin.command?.processes).toBe(1);
      expect(peak.rssBytes).toBeGreaterThan(0);
      expect(peak.treeRssBytes).toBeGreaterThan(peak.rssBytes);
      expect(peak.samples).toBeGreaterThan(1);
    } finally {
      process.kill(shell.pid!, "SIGTERM");
      // The shell's children end with their 5 s sleeps.
    }
  });
});

describe("the scale mode's helpers", () => {
  it("splits a fleet into shards of at most N tenants", () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([], 2)).toEqual([]);
  });

  it("publishes the platform's declared facts as the management stack's fleetPlatform does", () => {
    const entry = (urn: string) => ({ urn, props: {} });
    const registrations = [
      { type: componentTypes.caren, name: "caren", inputs: {}, urn: "c", dependencies: [], outputs: { declared: [entry("gate")] } },
      { type: componentTypes.tenantCluster, name: "t", inputs: {}, urn: "t", dependencies: [], outputs: { declared: [entry("cluster")] } },
      { type: componentTypes.clusterApi, name: "capi", inputs: {}, urn: "a", dependencies: [], outputs: { declared: [entry("core")] } },
      { type: componentTypes.hetznerClusterClass, name: "class", inputs: {}, urn: "k", dependencies: [], outputs: { declared: [entry("class")] } },
    ];
    expect(declaredPlatformOf(registrations).map((declared) => declared.urn)).toEqual(["core", "gate", "class"]);
  });
});
