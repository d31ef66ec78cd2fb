import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * STAND-IN for the Hetzner Cloud API (api.hetzner.cloud cannot be reached from here). It implements
 * only the calls this fleet's own parts make, each project apart by its bearer token:
 * - the hcloud provider's Firewall (terraform-provider-hcloud v1.63.0: internal/firewall/resource.go):
 *   create (with `apply_to`), get, update, set_rules, apply_to_resources, remove_from_resources,
 *   delete, and the actions it waits for (hcloud-go v2.40.0: hcloud/action_waiter.go, `GET /actions?id=`);
 * - load balancers as the hcloud CCM creates and deletes them (tests/fakes/hcloud-ccm.ts, the
 *   stand-in CCM, is the only creator), and their list by label selector, as the drain asks
 *   (components/tenant-cluster/drain-load-balancers.mjs);
 * - the lists `scripts/hcloud-leftovers.mjs` reads (servers, load balancers, volumes, networks, primary
 *   and floating IPs, placement groups, firewalls, SSH keys), paginated.
 * Every request body and answer is kept with the hcloud-go schema type the real client uses for it, so
 * a test can decode them with hcloud-go itself (tests/go/hcloud-schema).
 * Not modelled: servers, volumes, networks and the rest are always empty (nothing here creates them:
 * CAPH, which would, does not run); action progress (every action is finished when created);
 * rate limits; error codes other than not_found, unauthorized and invalid_input; validation of
 * rules beyond their shape; and label selectors other than `k`, `!k`, `k=v`, `k!=v`, `k in (…)`.
 */

export interface HcloudFirewall {
  id: number;
  name: string;
  labels: Record<string, string>;
  created: string;
  rules: { direction: string; source_ips: string[]; destination_ips: string[]; protocol: string; port: string | null; description: string | null }[];
  applied_to: { type: string; label_selector?: { selector: string }; server?: { id: number } }[];
}

export interface HcloudLoadBalancer {
  id: number;
  name: string;
  labels: Record<string, string>;
  ip: string;
  location: string;
}

export interface HcloudProject {
  firewalls: Map<number, HcloudFirewall>;
  loadBalancers: Map<number, HcloudLoadBalancer>;
  actions: Map<number, Record<string, unknown>>;
}

/** One message with the hcloud-go schema type it is decoded into. */
export interface SchemaMessage {
  schema: string;
  body: unknown;
}

export interface HcloudApiStandIn {
  /** e.g. http://127.0.0.1:<port>/v1, what HCLOUD_ENDPOINT takes. */
  readonly endpoint: string;
  /** Adds an empty project whose API token is `token`. */
  addProject(token: string): HcloudProject;
  project(token: string): HcloudProject | undefined;
  /** "METHOD /path" of every request, in order, with the time it arrived. */
  readonly requests: { at: number; token: string; line: string }[];
  readonly messages: SchemaMessage[];
  stop(): Promise<void>;
}

/** API collection → the hcloud-go list response type. */
const listSchemas: Record<string, string> = {
  servers: "ServerListResponse",
  load_balancers: "LoadBalancerListResponse",
  volumes: "VolumeListResponse",
  networks: "NetworkListResponse",
  primary_ips: "PrimaryIPListResponse",
  floating_ips: "FloatingIPListResponse",
  placement_groups: "PlacementGroupListResponse",
  firewalls: "FirewallListResponse",
  ssh_keys: "SSHKeyListResponse",
};

/** Whether `labels` match a Hetzner label selector (docs.hetzner.cloud, "Label Selector"). */
export function matchesLabelSelector(labels: Readonly<Record<string, string>>, selector: string): boolean {
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const term = raw.trim();
    let match: RegExpExecArray | null;
    if ((match = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      const values = match[3]!.split(",").map((value) => value.trim());
      const has = match[1]! in labels && values.includes(labels[match[1]!]!);
      return match[2] === "in" ? has : !has;
    }
    if ((match = /^(\S+?)\s*(!=|==|=)\s*(\S*)$/.exec(term))) return match[2] === "!=" ? labels[match[1]!] !== match[3] : labels[match[1]!] === match[3];
    if ((match = /^!(\S+)$/.exec(term))) return !(match[1]! in labels);
    if (/^\S+$/.test(term)) return term in labels;
    throw new Error(`the stand-in Hetzner API does not understand the label selector ${JSON.stringify(selector)}`);
  });
}

export async function startHcloudApiStandIn(): Promise<HcloudApiStandIn> {
  const projects = new Map<string, HcloudProject>();
  const requests: HcloudApiStandIn["requests"] = [];
  const messages: SchemaMessage[] = [];
  let nextId = 1;
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, "+00:00");

  const action = (project: HcloudProject, command: string, resources: { id: number; type: string }[]) => {
    const id = nextId++;
    const body = { id, command, status: "success", progress: 100, started: now(), finished: now(), error: null, resources };
    project.actions.set(id, body);
    return body;
  };
  const loadBalancerBody = (lb: HcloudLoadBalancer) => ({
    id: lb.id,
    name: lb.name,
    labels: lb.labels,
    created: now(),
    public_net: { enabled: true, ipv4: { ip: lb.ip, dns_ptr: "" }, ipv6: { ip: "2001:db8::1", dns_ptr: "" } },
    private_net: [],
    location: { id: 1, name: lb.location, description: lb.location, country: "DE", city: "", latitude: 0, longitude: 0, network_zone: "eu-central" },
    load_balancer_type: { id: 1, name: "lb11", description: "LB11", max_connections: 10000, max_services: 5, max_targets: 25, max_assigned_certificates: 10, prices: [] },
    protection: { delete: false },
    services: [],
    targets: [],
    algorithm: { type: "round_robin" },
    included_traffic: 0,
    outgoing_traffic: null,
    ingoing_traffic: null,
  });

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://stand-in");
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
      requests.push({ at: Date.now(), token, line: `${request.method} ${url.pathname}${url.search}` });
      const send = (status: number, schema: string | undefined, body?: unknown) => {
        if (schema && body !== undefined) messages.push({ schema, body });
        response.writeHead(status, { "Content-Type": "application/json" }).end(body === undefined ? "" : JSON.stringify(body));
      };
      const error = (status: number, code: string, message: string) => { send(status, "ErrorResponse", { error: { code, message, details: null } }); };
      const project = projects.get(token);
      if (!project) { error(401, "unauthorized", "unable to authenticate"); return; }
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        error(400, "invalid_input", "invalid JSON"); return;
      }
      const received = (schema: string) => messages.push({ schema, body });
      const path = url.pathname.replace(/^\/v1/, "");
      let match: RegExpExecArray | null;

      if (request.method === "GET" && (match = /^\/([a-z_]+)$/.exec(path)) && match[1]! in listSchemas) {
        const kind = match[1]!;
        const selector = url.searchParams.get("label_selector");
        const all: { labels: Record<string, string> }[] =
          kind === "firewalls" ? [...project.firewalls.values()] : kind === "load_balancers" ? [...project.loadBalancers.values()] : [];
        const items = all.filter((item) => selector === null || matchesLabelSelector(item.labels, selector));
        const perPage = Number(url.searchParams.get("per_page") ?? 25);
        const page = Number(url.searchParams.get("page") ?? 1);
        const lastPage = Math.max(1, Math.ceil(items.length / perPage));
        const slice = items.slice((page - 1) * perPage, page * perPage).map((item) => (kind === "load_balancers" ? loadBalancerBody(item as HcloudLoadBalancer) : item));
        send(200, listSchemas[kind], {
          [kind]: slice,
          meta: { pagination: { page, per_page: perPage, previous_page: page > 1 ? page - 1 : 0, next_page: page < lastPage ? page + 1 : 0, last_page: lastPage, total_entries: items.length } },
        }); return;
      }
      if (request.method === "GET" && path === "/actions") {
        const ids = url.searchParams.getAll("id").map(Number);
        const actions = ids.map((id) => project.actions.get(id)).filter((found) => found !== undefined);
        send(200, "ActionListResponse", { actions, meta: { pagination: { page: 1, per_page: 25, previous_page: 0, next_page: 0, last_page: 1, total_entries: actions.length } } }); return;
      }
      if (request.method === "GET" && (match = /^\/actions\/(\d+)$/.exec(path))) {
        const found = project.actions.get(Number(match[1]));
        if (found) send(200, "ActionGetResponse", { action: found });
        else error(404, "not_found", "action not found");
        return;
      }
      if (request.method === "POST" && path === "/firewalls") {
        received("FirewallCreateRequest");
        if (typeof body.name !== "string" || body.name === "") { error(400, "invalid_input", "name is required"); return; }
        if ([...project.firewalls.values()].some((firewall) => firewall.name === body.name)) { error(409, "uniqueness_error", "name is already used"); return; }
        const id = nextId++;
        const rules = ((body.rules as Record<string, unknown>[] | undefined) ?? []).map((rule) => ({
          direction: String(rule.direction),
          source_ips: (rule.source_ips as string[] | undefined) ?? [],
          destination_ips: (rule.destination_ips as string[] | undefined) ?? [],
          protocol: String(rule.protocol),
          port: (rule.port as string | undefined) ?? null,
          description: (rule.description as string | undefined) ?? null,
        }));
        const firewall: HcloudFirewall = { id, name: body.name, labels: (body.labels as Record<string, string> | undefined) ?? {}, created: now(), rules, applied_to: (body.apply_to as HcloudFirewall["applied_to"] | undefined) ?? [] };
        project.firewalls.set(id, firewall);
        const actions = firewall.applied_to.map(() => action(project, "apply_firewall", [{ id, type: "firewall" }]));
        send(201, "FirewallCreateResponse", { firewall, actions }); return;
      }
      if ((match = /^\/firewalls\/(\d+)(\/actions\/([a-z_]+))?$/.exec(path))) {
        const firewall = project.firewalls.get(Number(match[1]));
        if (!firewall) { error(404, "not_found", "firewall not found"); return; }
        const verb = match[3];
        if (request.method === "GET" && !verb) { send(200, "FirewallGetResponse", { firewall }); return; }
        if (request.method === "PUT" && !verb) {
          received("FirewallUpdateRequest");
          if (typeof body.name === "string") firewall.name = body.name;
          if (body.labels) firewall.labels = body.labels as Record<string, string>;
          send(200, "FirewallUpdateResponse", { firewall }); return;
        }
        if (request.method === "DELETE" && !verb) {
          if (firewall.applied_to.length > 0) { error(422, "resource_in_use", "firewall is still applied"); return; }
          project.firewalls.delete(firewall.id);
          send(204, undefined); return;
        }
        if (request.method === "POST" && verb === "set_rules") {
          received("FirewallActionSetRulesRequest");
          firewall.rules = ((body.rules as Partial<HcloudFirewall["rules"][number]>[] | undefined) ?? []).map((rule) => ({
            direction: String(rule.direction),
            source_ips: rule.source_ips ?? [],
            destination_ips: rule.destination_ips ?? [],
            protocol: String(rule.protocol),
            port: rule.port ?? null,
            description: rule.description ?? null,
          }));
          send(201, "FirewallActionSetRulesResponse", { actions: [action(project, "set_firewall_rules", [{ id: firewall.id, type: "firewall" }])] }); return;
        }
        if (request.method === "POST" && verb === "apply_to_resources") {
          received("FirewallActionApplyToResourcesRequest");
          firewall.applied_to.push(...((body.apply_to as HcloudFirewall["applied_to"] | undefined) ?? []));
          send(201, "FirewallActionApplyToResourcesResponse", { actions: [action(project, "apply_firewall", [{ id: firewall.id, type: "firewall" }])] }); return;
        }
        if (request.method === "POST" && verb === "remove_from_resources") {
          received("FirewallActionRemoveFromResourcesRequest");
          const removed = JSON.stringify((body.remove_from as unknown[] | undefined) ?? []);
          firewall.applied_to = firewall.applied_to.filter((resource) => !removed.includes(JSON.stringify(resource.label_selector ?? resource.server ?? {})));
          send(201, "FirewallActionRemoveFromResourcesResponse", { actions: [action(project, "remove_firewall", [{ id: firewall.id, type: "firewall" }])] }); return;
        }
      }
      if (request.method === "POST" && path === "/load_balancers") {
        received("LoadBalancerCreateRequest");
        const id = nextId++;
        const lb: HcloudLoadBalancer = { id, name: String(body.name), labels: (body.labels as Record<string, string> | undefined) ?? {}, ip: `203.0.113.${id % 250}`, location: typeof body.location === "string" ? body.location : "fsn1" };
        project.loadBalancers.set(id, lb);
        send(201, "LoadBalancerCreateResponse", { load_balancer: loadBalancerBody(lb), action: action(project, "create_load_balancer", [{ id, type: "load_balancer" }]) }); return;
      }
      if (request.method === "DELETE" && (match = /^\/load_balancers\/(\d+)$/.exec(path))) {
        if (!project.loadBalancers.delete(Number(match[1]))) { error(404, "not_found", "load balancer not found"); return; }
        send(204, undefined); return;
      }
      error(404, "not_found", `the stand-in Hetzner API does not implement ${request.method} ${url.pathname}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}/v1`,
    addProject: (token) => {
      const project: HcloudProject = { firewalls: new Map(), loadBalancers: new Map(), actions: new Map() };
      projects.set(token, project);
      return project;
    },
    project: (token) => projects.get(token),
    requests,
    messages,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => { resolve(); });
      }),
  };
}
