import * as pulumi from "@pulumi/pulumi";
import { interruptedRelease, type ReleaseStep } from "../../infra/model/platform/helm-history";
import { revisionOf, type HelmStorageSecret } from "../../infra/model/platform/helm-release";

/** Bound on each API request the clean-up makes. */
const requestTimeoutMs = 15_000;

/** Which release, on which cluster. */
export interface ReleaseAddress {
  /** Admin kubeconfig of the cluster the release is on (never logged). */
  kubeconfig: string;
  namespace: string;
  /** The release's name, which is also its chart's name here. */
  release: string;
  chart: string;
}

/**
 * Deletes Helm's records of an interrupted install or upgrade of this release (see
 * interruptedRelease), so that the step the engine retries can run; logs what it removed.
 * Only Helm's storage Secrets go: the objects keep running, and Helm takes them over again.
 */
export async function clearInterruptedRelease(address: ReleaseAddress, step: ReleaseStep): Promise<void> {
  // An ES module shared with the scripts that local commands run.
  const client = await import("../kube-client.mjs");
  const target = client.parseKubeconfig(address.kubeconfig, "the kubeconfig of the release's cluster");
  const where = `${address.namespace}/${address.release}`;
  const list = await client.kubeRequest(target, "GET", `/api/v1/namespaces/${address.namespace}/secrets?labelSelector=${encodeURIComponent(`owner=helm,name=${address.release}`)}`, { timeoutMs: requestTimeoutMs });
  if (list.status === 404) return;
  if (list.status !== 200) throw new Error(`reading Helm's records of release ${where}: ${list.reason}`);
  const history = ((list.json as { items?: HelmStorageSecret[] }).items ?? []).map(revisionOf);
  const interrupted = interruptedRelease(history, address.chart, step);
  if (!interrupted) return;
  for (const revision of history.filter((candidate) => interrupted.revisions.includes(candidate.revision))) {
    const deleted = await client.kubeRequest(target, "DELETE", `/api/v1/namespaces/${address.namespace}/secrets/${revision.secret}`, { timeoutMs: requestTimeoutMs });
    if (deleted.status !== 200 && deleted.status !== 404) throw new Error(`deleting Helm's record ${address.namespace}/${revision.secret}: ${deleted.reason}`);
  }
  void pulumi.log.warn(`Helm release ${where}: removed Helm's record of ${interrupted.reason}, left by an interrupted run; Helm now ${step === "create" ? "installs it again and takes over what it had created" : "upgrades it from its last deployed revision"}.`);
}

/**
 * Whether the engine runs resource hooks for this program: registers a hook bound to nothing and
 * reports whether that worked. The Pulumi CLI's own Node.js language host does; a language host
 * that relays the engine's resource monitor without RegisterResourceHook answers UNIMPLEMENTED
 * (the v3.68.0 host, github.com/pulumi/pulumi/sdk/v3@v3.68.0: nodejs/cmd/pulumi-language-nodejs/
 * proxy.go, `monitorProxy`). Without hooks the releases get none, and the program says so once.
 */
export async function resourceHooksAvailable(): Promise<boolean> {
  // A plain object, not `new ResourceHook`: the constructor registers at once and a refusal would be an unhandled rejection.
  const probe = { name: "capi-fleet-resource-hook-probe", callback: async () => {}, opts: undefined } as unknown as pulumi.ResourceHook;
  try {
    await pulumi.runtime.registerResourceHook(probe);
    return true;
  } catch (error) {
    void pulumi.log.warn(
      `This Pulumi engine cannot run resource hooks (${(error as Error).message.split("\n")[0]}), so an \`up\` that is interrupted during a Helm install or upgrade is not cleared up by the next one: docs/operations.md, section 7, "An interrupted up", says what to do by hand. Use the Pulumi CLI's own language host to get it.`,
    );
    return false;
  }
}
