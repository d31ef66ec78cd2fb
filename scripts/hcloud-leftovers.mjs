#!/usr/bin/env node
// @ts-check
/**
 * Lists what is left in a tenant's Hetzner Cloud project after its cluster was deleted.
 * Each tenant has a project of its own, so once `pulumi up` has removed the tenant the
 * project should hold no servers, load balancers, volumes, networks, IPs, placement groups
 * or firewalls; anything listed keeps costing money (or blocks a re-creation) and was
 * orphaned. SSH keys are shown but not counted: you may keep the one named in sshKeyName.
 *
 *   HCLOUD_TOKEN     the tenant project's API token (required; read from the environment
 *                    so it never appears in shell history or the process list)
 *   HCLOUD_ENDPOINT  Hetzner API (default https://api.hetzner.cloud/v1)
 *
 * Usage: HCLOUD_TOKEN=… node scripts/hcloud-leftovers.mjs [--help]
 * Exit codes: 0 the project is empty; 1 leftovers (listed on stderr) or the API refused;
 * 2 missing environment or bad usage.
 */
import { URL } from "node:url";
import { HttpError, NetworkError, httpRequest, requireEnv, requestTimeoutMs, statusReason } from "../components/kube-client.mjs";

const program = "hcloud-leftovers";
const usage = `usage: HCLOUD_TOKEN=<tenant project token> node scripts/${program}.mjs
Lists the resources left in a tenant's Hetzner project; exit 0 when it is empty, 1 when not.`;

/** Resource kinds CAPH, the hcloud CCM/CSI and the drain can leave behind (API collection names). */
const leftoverKinds = ["servers", "load_balancers", "volumes", "networks", "primary_ips", "floating_ips", "placement_groups", "firewalls"];

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(usage);
  process.exit(0);
}
if (process.argv.length > 2) {
  console.error(`${program}: unexpected arguments: ${process.argv.slice(2).join(" ")}\n${usage}`);
  process.exit(2);
}

const { HCLOUD_TOKEN: token } = requireEnv(program, ["HCLOUD_TOKEN"]);
const endpoint = (process.env.HCLOUD_ENDPOINT ?? "https://api.hetzner.cloud/v1").replace(/\/$/, "");

/** @param {unknown} value @returns {Record<string, unknown>} */
const record = (value) => (typeof value === "object" && value !== null && !Array.isArray(value) ? /** @type {Record<string, unknown>} */ (value) : {});

/**
 * Every item of one collection, following Hetzner's pagination.
 * @param {string} kind
 * @returns {Promise<Record<string, unknown>[]>}
 */
async function list(kind) {
  /** @type {Record<string, unknown>[]} */
  const items = [];
  for (let page = 1; page !== 0; ) {
    const response = await httpRequest(new URL(`${endpoint}/${kind}?per_page=50&page=${page}`), {
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
      timeoutMs: requestTimeoutMs,
    });
    /** @type {unknown} */
    let json;
    try {
      json = JSON.parse(response.body);
    } catch {
      json = undefined;
    }
    if (response.status !== 200) throw new HttpError(response.status, statusReason(response.status, json));
    const body = record(json);
    items.push(...(Array.isArray(body[kind]) ? body[kind] : []).map(record));
    const next = record(record(body.meta).pagination).next_page;
    page = typeof next === "number" ? next : 0;
  }
  return items;
}

/** @param {Record<string, unknown>} item */
function describe(item) {
  const labels = Object.entries(record(item.labels)).map(([key, value]) => `${key}=${String(value)}`);
  return `${String(item.name ?? "(unnamed)")} (id ${String(item.id)}${labels.length > 0 ? `, labels ${labels.join(",")}` : ""})`;
}

try {
  let leftovers = 0;
  for (const kind of leftoverKinds) {
    const items = await list(kind);
    leftovers += items.length;
    for (const item of items) console.error(`${program}: left over: ${kind.replace(/_/g, " ").replace(/s$/, "")} ${describe(item)}`);
  }
  const keys = await list("ssh_keys");
  for (const key of keys) console.error(`${program}: kept: ssh key ${describe(key)} (not counted; delete it in the console if unused)`);
  if (leftovers > 0) {
    console.error(`${program}: ${leftovers} resource(s) left in the project; delete them in the Hetzner console (or with the hcloud CLI) once you are sure nothing uses them`);
    process.exit(1);
  }
  console.error(`${program}: the project is empty (${leftoverKinds.join(", ")} checked)`);
} catch (error) {
  if (error instanceof HttpError && error.status === 401) {
    console.error(`${program}: Hetzner refused the token (401): check HCLOUD_TOKEN is the tenant project's token`);
  } else if (error instanceof HttpError || error instanceof NetworkError) {
    console.error(`${program}: could not list the project at ${endpoint}: ${error.message}`);
  } else {
    throw error;
  }
  process.exit(1);
}
