import { describe, expect, it } from "vitest";
import { readStackConfig } from "../../../tests/support/stack-files";
import { immutableChanges, tenantImmutables } from "./tenant-immutables";
import { FleetConfigError } from "../config/stack-config";
import { parseFleetConfig, type FleetConfig } from "../stack/validate-fleet-config";

// The CAREN settings of a tenant (ntp, proxy, registries, users, kube-proxy mode, Cilium values)
// as the stack config takes them: the committed prod stack (which sets every one on `payments`)
// is the valid baseline, and each case changes one thing and expects the key path and what is
// allowed. What CAREN's schema and CAPI do with the values: tests/in-the-loop/caren-schema.test.ts and
// tests/in-the-loop/capi-in-the-loop.test.ts.

type Tenant = Record<string, unknown> & { name: string; cni: Record<string, unknown> };

function prod(change: (tenants: Tenant[], values: Record<string, string>) => void = () => {}): FleetConfig {
  const { values, secretKeys } = readStackConfig("prod");
  const tenants = JSON.parse(values["capi-fleet:tenants"]!) as Tenant[];
  change(tenants, values);
  values["capi-fleet:tenants"] = JSON.stringify(tenants);
  return parseFleetConfig({ stack: "prod", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true });
}

function problems(change: (tenants: Tenant[], values: Record<string, string>) => void): string[] {
  try {
    prod(change);
  } catch (error) {
    if (error instanceof FleetConfigError) return error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    throw error;
  }
  return [];
}

const payments = (tenants: Tenant[]) => tenants.find((tenant) => tenant.name === "payments")!;
const credentialsOf = (values: Record<string, string>) => JSON.parse(values["capi-fleet:tenantRegistryCredentials"]!) as Record<string, Record<string, unknown>>;

describe("the tenant's CAREN settings in the stack config", () => {
  it("accepts the prod stack, which sets every one of them, and reads the registry credentials as secrets", () => {
    const config = prod();
    const tenant = config.tenants.find((t) => t.name === "payments")!;
    expect([tenant.ntp, tenant.proxy, tenant.imageRegistries, tenant.globalImageRegistryMirror, tenant.users, tenant.kubeProxy, tenant.cni.values].every((v) => v !== undefined)).toBe(true);
    expect([...tenant.registryCredentials.keys()].sort()).toEqual(["harbor", "mirror"]);
    expect(String(tenant.registryCredentials.get("harbor")!.password)).toBe("[secret]");
  });

  it.each<[string, (tenants: Tenant[], values: Record<string, string>) => void, string]>([
    ["an NTP server that is no host", (t) => (payments(t).ntp = { servers: ["not a host"] }), 'tenants[0].ntp.servers[0]: "not a host" is not an NTP server; allowed: an IP address or a lower-case host name'],
    ["no NTP server", (t) => (payments(t).ntp = { servers: [] }), "tenants[0].ntp.servers: needs at least one server"],
    ["a proxy that is no URL", (t) => (payments(t).proxy = { http: "proxy:3128" }), 'tenants[0].proxy.http: "proxy:3128" is not a proxy URL; allowed: an http:// or https:// URL'],
    ["a proxy with only exceptions", (t) => (payments(t).proxy = { additionalNoProxy: [".example"] }), "tenants[0].proxy: sets no proxy; allowed: http and/or https"],
    ["CAREN's key name instead of the config's", (t) => (payments(t).proxy = { http: "http://p:3128", additionalNo: [".example"] }), "tenants[0].proxy.additionalNo: unknown key; allowed keys: http, https, additionalNoProxy"],
    ["a registry URL that is not http(s)", (t) => (payments(t).imageRegistries = [{ url: "oci://registry.example" }]), 'tenants[0].imageRegistries[0].url: "oci://registry.example" is not a registry URL; allowed: an http:// or https:// URL'],
    ["a mirror without url", (t) => (payments(t).globalImageRegistryMirror = { credentials: "mirror" }), "tenants[0].globalImageRegistryMirror.url: is required"],
    ["a user named root", (t) => (payments(t).users = [{ name: "root", sshAuthorizedKeys: [(payments(t).users as { sshAuthorizedKeys: string[] }[])[0]!.sshAuthorizedKeys[0]] }]), 'tenants[0].users[0].name: "root" is not allowed as a user name'],
    ["a user without a key", (t) => (payments(t).users = [{ name: "ops", sshAuthorizedKeys: [] }]), "tenants[0].users[0].sshAuthorizedKeys: needs at least one key"],
    ["a user with a password field", (t) => (payments(t).users = [{ name: "ops", sshAuthorizedKeys: (payments(t).users as { sshAuthorizedKeys: string[] }[])[0]!.sshAuthorizedKeys, hashedPassword: "$6$x" }]), "tenants[0].users[0].hashedPassword: unknown key"],
    ["an unknown kube-proxy mode", (t) => (payments(t).kubeProxy = { mode: "ipvs" }), 'tenants[0].kubeProxy.mode: "ipvs" is not a kube-proxy mode; allowed: iptables, nftables, disabled'],
    ["kubeProxyReplacement against another mode", (t) => { payments(t).kubeProxy = { mode: "iptables" }; payments(t).cni.kubeProxyReplacement = true; }, 'tenants[0].kubeProxy.mode: "iptables" contradicts tenants[0].cni.kubeProxyReplacement: true'],
    ["ClusterResourceSet with kube-proxy replacement", (t) => { payments(t).cni = { provider: "cilium", strategy: "ClusterResourceSet" }; }, "tenants[0].cni.strategy: ClusterResourceSet cannot replace kube-proxy"],
    ["ClusterResourceSet with the legacy kubeProxyReplacement", (t) => { payments(t).kubeProxy = undefined; payments(t).cni = { provider: "cilium", strategy: "ClusterResourceSet", kubeProxyReplacement: true }; }, "tenants[0].cni.strategy: ClusterResourceSet cannot replace kube-proxy"],
    ["Cilium values with ClusterResourceSet", (t) => { payments(t).kubeProxy = undefined; payments(t).cni = { ...payments(t).cni, strategy: "ClusterResourceSet" }; }, "tenants[0].cni.values: is used by CAREN with the HelmAddon strategy only"],
    ["Cilium values that do not replace a disabled kube-proxy", (t) => (payments(t).cni.values = { ipam: { mode: "kubernetes" } }), "tenants[0].cni.values.kubeProxyReplacement: nothing leaves the cluster without kube-proxy and without its replacement"],
    ["Cilium values that are not a mapping", (t) => (payments(t).cni.values = "kubeProxyReplacement: true"), "tenants[0].cni.values: "],
    ["credentials nobody references", (_t, v) => { const c = credentialsOf(v); c.payments!.extra = { username: "u", password: "p" }; v["capi-fleet:tenantRegistryCredentials"] = JSON.stringify(c); }, "tenantRegistryCredentials.payments.extra: no registry of tenant payments uses it"],
    ["referenced credentials that are missing", (t) => ((payments(t).imageRegistries as Record<string, unknown>[])[0]!.credentials = "quay"), "tenantRegistryCredentials.payments.quay: is required: a registry of tenant payments names these credentials"],
    ["credentials without a password", (_t, v) => { const c = credentialsOf(v); (c.payments!.harbor as Record<string, unknown>).password = undefined; v["capi-fleet:tenantRegistryCredentials"] = JSON.stringify(c); }, "tenantRegistryCredentials.payments.harbor.password: is required"],
    ["a misspelled credentials key", (_t, v) => { const c = credentialsOf(v); (c.payments!.harbor as Record<string, unknown>).user = "u"; v["capi-fleet:tenantRegistryCredentials"] = JSON.stringify(c); }, "tenantRegistryCredentials.payments.harbor.user: unknown key; allowed keys: username, password, caCrt"],
    ["credentials of an unknown tenant", (_t, v) => { const c = credentialsOf(v); c.paymnts = c.payments!; v["capi-fleet:tenantRegistryCredentials"] = JSON.stringify(c); }, 'tenantRegistryCredentials.paymnts: no tenant is named "paymnts"; did you mean "payments"?'],
    ["a CA that is no PEM certificate", (_t, v) => { const c = credentialsOf(v); (c.payments!.harbor as Record<string, unknown>).caCrt = "not a certificate"; v["capi-fleet:tenantRegistryCredentials"] = JSON.stringify(c); }, "tenantRegistryCredentials.payments.harbor.caCrt: is not a PEM certificate"],
  ])("refuses %s, naming the key", (_what, change, expected) => {
    const found = problems(change);
    expect(found.some((problem) => problem.startsWith(expected)), found.join("\n")).toBe(true);
  });

  it("refuses registry credentials stored in plain text", () => {
    const { values, secretKeys } = readStackConfig("prod");
    const plain = new Set(secretKeys.filter((key) => key !== "capi-fleet:tenantRegistryCredentials"));
    expect(() => parseFleetConfig({ stack: "prod", values, secretKeys: plain, allowPlaceholderSecrets: true })).toThrow(/tenantRegistryCredentials: is stored in plain text/);
  });

  it("records the kube-proxy mode as immutable, in either spelling, and refuses a change against the deployed record", () => {
    const config = prod();
    const tenant = config.tenants.find((t) => t.name === "payments")!;
    const recorded = tenantImmutables(tenant);
    expect(recorded).toMatchObject({ kubeProxyMode: "disabled", kubeProxyReplacement: true });
    const legacy = { ...tenant, kubeProxy: undefined, cni: { ...tenant.cni, kubeProxyReplacement: true } };
    expect(immutableChanges([legacy], new Map([[tenant.name, recorded]]))).toEqual([]);
    const changed = { ...tenant, kubeProxy: { mode: "iptables" as const } };
    const [change] = immutableChanges([changed], new Map([[tenant.name, recorded]]));
    expect(change?.path).toBe("tenants[0].kubeProxy.mode");
    expect(change?.message).toContain('differs from the deployed "disabled"');
    // A record written before the mode was recorded still guards kube-proxy replacement.
    const { kubeProxyMode: _mode, ...old } = recorded;
    expect(immutableChanges([changed], new Map([[tenant.name, old]])).map((c) => c.path)).toEqual(["tenants[0].cni.kubeProxyReplacement"]);
    // Unset and iptables are the same mode (kubeadm's default).
    const unset = { ...tenant, kubeProxy: undefined, cni: { ...tenant.cni, kubeProxyReplacement: false } };
    expect(immutableChanges([unset], new Map([[tenant.name, { ...recorded, kubeProxyMode: "iptables", kubeProxyReplacement: false }]]))).toEqual([]);
  });
});
