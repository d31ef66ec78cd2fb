/**
 * What a tenant node runs before kubeadm: containerd plus the kubelet, kubeadm and kubectl
 * of the node's own Kubernetes version, from the Kubernetes project's package repository.
 *
 * The version is an argument, filled in per node by a ClusterClass patch from
 * `{{ .builtin.controlPlane.version }}` / `{{ .builtin.machineDeployment.version }}`. During a
 * chained upgrade those differ from the Cluster's target version, and a version written
 * into the template would make every new node install the wrong kubelet (CAPH's shipped
 * class hard-codes one: syself/cluster-api-provider-hetzner@v1.1.8
 * templates/cluster-templates/v1beta1/cluster-class.yaml, same bug class as CAPH #591).
 */
import { catalog } from "../versions/catalog";
import { withoutCommentLines } from "./shell-comments";
import { readShippedFile } from "./shipped-file";

/** Where the install script is written on every node. */
export const installKubernetesScriptPath = "/etc/capi-fleet/install-kubernetes.sh";

/**
 * The preKubeadmCommand that installs Kubernetes at a version given by a Go-template
 * expression (a ClusterClass `valueFrom.template`), with the catalog's containerd.
 */
export function installKubernetesCommand(versionTemplate: string): string {
  return `${installKubernetesScriptPath} ${versionTemplate} ${catalog.containerd.version}`;
}

/** The node scripts' text, as committed (comments included). */
export interface NodeScripts {
  readonly installKubernetes: string;
  readonly advertisePrivateAddress: string;
}

/**
 * A node script's text as the ClusterClass templates carry it: the script without its comment
 * lines, so that a comment edit changes no template and rolls no machine.
 */
export function shippedNodeScript(text: string, file: string): string {
  return withoutCommentLines(text, file);
}

/** The install script, a real shell file checked by shellcheck (see its header for what it does). */
export const installKubernetesScriptFile = "infra/model/platform/shell/install-kubernetes.sh";

/** Where the advertise-address script is written on every control-plane node. */
export const advertisePrivateAddressScriptPath = "/etc/capi-fleet/advertise-private-address.sh";

/**
 * The script that makes kubeadm advertise a control plane's private address (API server and
 * etcd), so that the tenant firewall can close the public side; a real shell file, checked by
 * shellcheck (see its header).
 */
export const advertisePrivateAddressScriptFile = "infra/model/platform/shell/advertise-private-address.sh";

/** The committed node scripts (the ClusterClass's default). */
export const committedNodeScripts: NodeScripts = {
  installKubernetes: readShippedFile(__dirname, installKubernetesScriptFile),
  advertisePrivateAddress: readShippedFile(__dirname, advertisePrivateAddressScriptFile),
};

/** The install script's text, written to every node by the ClusterClass templates. */
export const installKubernetesScript = shippedNodeScript(committedNodeScripts.installKubernetes, installKubernetesScriptFile);

/** The advertise-address script's text, written to control-plane nodes by the ClusterClass. */
export const advertisePrivateAddressScript = shippedNodeScript(committedNodeScripts.advertisePrivateAddress, advertisePrivateAddressScriptFile);
