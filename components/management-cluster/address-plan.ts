import { hostAddress, mustParseCidr } from "../../infra/model/config/cidr";

/** Host offsets inside the management subnet; .1 is the hcloud gateway. */
const loadBalancerHostOffset = 10;
const firstServerHostOffset = 11;

/** Fixed private addresses, so k3s join URLs and LB targets are known before servers exist. */
export interface ManagementAddressPlan {
  readonly loadBalancerIp: string;
  readonly serverIps: readonly string[];
}

/** Plans the private IPs of the API load balancer and of `serverCount` k3s servers. */
export function planManagementAddresses(subnetCidr: string, serverCount: number): ManagementAddressPlan {
  const subnet = mustParseCidr(subnetCidr);
  return {
    loadBalancerIp: hostAddress(subnet, loadBalancerHostOffset),
    serverIps: Array.from({ length: serverCount }, (_, index) => hostAddress(subnet, firstServerHostOffset + index)),
  };
}
