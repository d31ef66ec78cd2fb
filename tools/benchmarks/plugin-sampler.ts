// Samples the resource plugin processes of a running `pulumi preview` from /proc (Linux): every
// descendant of the CLI whose executable is `pulumi-resource-<name>`, with its resident set size.
// The engine starts one plugin process per provider resource (pulumi/pkg/v3@v3.248.0:
// resource/deploy/providers/registry.go, loadProvider → host/host.go, defaultHost.Provider), so a
// fleet whose tenants each have an hcloud provider runs one hcloud process per tenant.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The peaks seen while sampling. */
export interface PluginPeak {
  /** Highest number of plugin processes alive at once. */
  processes: number;
  /** Highest sum of their RSS at one sample, in bytes. */
  rssBytes: number;
  /** Per plugin name (`hcloud`, `kubernetes`, `command`): its own peaks. */
  byPlugin: Record<string, { processes: number; rssBytes: number }>;
  /** Highest RSS of the whole process tree (CLI, language host, analyzer, plugins) at one sample, in bytes. */
  treeRssBytes: number;
  samples: number;
}

interface ProcessInfo {
  pid: number;
  ppid: number;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined; // the process is gone
  }
}

/** Every process's parent, from /proc/<pid>/stat (the comm field may hold spaces and parentheses: parse after the last ")"). */
function processTable(): ProcessInfo[] {
  const table: ProcessInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`/proc/${entry}/stat`);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    table.push({ pid: Number(entry), ppid: Number(fields[1]) });
  }
  return table;
}

/** The process's VmRSS in bytes (0 when gone or a zombie). */
export function rssBytesOf(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readText(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) * 1024 : 0;
}

/** The plugin name of a `pulumi-resource-<name>` process, from its argv[0]; undefined for anything else. */
export function pluginNameOf(pid: number): string | undefined {
  const argv0 = (readText(`/proc/${pid}/cmdline`) ?? "").split("\0")[0] ?? "";
  const base = path.basename(argv0);
  return base.startsWith("pulumi-resource-") ? base.slice("pulumi-resource-".length) : undefined;
}

/** One sample: the descendants of `root` with their RSS and plugin names. */
export function sampleTree(root: number): { pid: number; plugin: string | undefined; rssBytes: number }[] {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of processTable()) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree: number[] = [];
  const queue = [root];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree.map((pid) => ({ pid, plugin: pluginNameOf(pid), rssBytes: rssBytesOf(pid) }));
}

/** Samples the tree under `root` every `intervalMs` until stopped; returns the peaks. */
export function startPluginSampler(root: number, intervalMs = 250): { stop(): PluginPeak } {
  const peak: PluginPeak = { processes: 0, rssBytes: 0, byPlugin: {}, treeRssBytes: 0, samples: 0 };
  const take = (): void => {
    const tree = sampleTree(root);
    const plugins = tree.filter((entry) => entry.plugin !== undefined);
    peak.samples++;
    peak.processes = Math.max(peak.processes, plugins.length);
    peak.rssBytes = Math.max(peak.rssBytes, plugins.reduce((sum, entry) => sum + entry.rssBytes, 0));
    peak.treeRssBytes = Math.max(peak.treeRssBytes, tree.reduce((sum, entry) => sum + entry.rssBytes, 0));
    const byName = new Map<string, { processes: number; rssBytes: number }>();
    for (const { plugin = "", rssBytes } of plugins) {
      const current = byName.get(plugin) ?? { processes: 0, rssBytes: 0 };
      byName.set(plugin, { processes: current.processes + 1, rssBytes: current.rssBytes + rssBytes });
    }
    for (const [name, now] of byName) {
      const before = peak.byPlugin[name] ?? { processes: 0, rssBytes: 0 };
      peak.byPlugin[name] = { processes: Math.max(before.processes, now.processes), rssBytes: Math.max(before.rssBytes, now.rssBytes) };
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
