import { execFile, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pricingFieldsRead, pricingSource } from "../infra/model/costs/hcloud-pricing";
import { parsePriceTable, priceTable, type PriceTable } from "../infra/model/costs/price-table";
import { isUnrefreshed } from "../infra/model/costs/stack-cost";
import { catalog } from "../infra/model/versions/catalog";
import { repoRoot } from "../tests/support/stack-files";
import { skipIfDeclared } from "../tests/support/unverified";
import { downloadModule } from "../tests/support/upstream";
import { loadBalancerTypes } from "../infra/model/facts/hetzner";

// `npm run prices`: the price table from the Hetzner Cloud API's GET /v1/pricing, read as hcloud-go
// decodes it. The live API cannot be reached from here, so the refresh runs against a stand-in HTTP
// server that answers with hcloud-go's own recorded pricing document (its schema test), read from
// the Go module proxy; the fields the refresh reads are checked against hcloud-go's schema structs.

const hcloudGo = { module: "github.com/hetznercloud/hcloud-go/v2", version: "v2.53.0" };
const runTs = path.join(repoRoot, "scripts", "run-ts");
const pricesProgram = path.join(repoRoot, "scripts", "prices.ts");
/** PATH with the node running the tests first: scripts/run-ts and scripts/prices run `node`. */
const nodeOnPath = `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`;
const scratch = mkdtempSync(path.join(tmpdir(), "prices-"));
let schemaSource = "";
let recordedPricing: unknown;

beforeAll(() => {
  const answer = downloadModule(hcloudGo.module, hcloudGo.version);
  if ("refused" in answer) throw new Error(`${hcloudGo.module}@${hcloudGo.version}: ${answer.refused}`);
  schemaSource = readFileSync(path.join(answer.dir, "hcloud", "schema", "pricing.go"), "utf8");
  // hcloud-go's TestPricingSchema decodes this document into schema.Pricing (hcloud/schema_test.go).
  const test = readFileSync(path.join(answer.dir, "hcloud", "schema_test.go"), "utf8");
  const body = /func TestPricingSchema\(t \*testing\.T\) \{\s*data := \[\]byte\(`([\s\S]*?)`\)/.exec(test)?.[1];
  if (!body) throw new Error("hcloud/schema_test.go: no TestPricingSchema document");
  recordedPricing = { pricing: JSON.parse(body) as unknown };
  // The command users run (scripts/prices, a link to scripts/plan) starts; the tests below run what it runs.
  const help = spawnSync("bash", ["scripts/prices", "--help"], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, PATH: nodeOnPath } });
  if (help.status !== 0) throw new Error(`scripts/prices --help: ${help.stderr}`);
}, 300_000);
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Every JSON path hcloud-go's schema defines below `PricingGetResponse`, from the structs' json
 * tags (`[]` after a list): what a response can hold, as the Go client decodes it.
 */
function schemaPaths(source: string): Set<string> {
  const structs = new Map<string, { name: string; list: boolean; type: string }[]>();
  for (const [, name = "", body = ""] of source.matchAll(/type (\w+) struct \{([\s\S]*?)\n\}/g)) {
    const fields = [...body.matchAll(/^\s*\w+\s+(\[\])?\*?(\w+)\s+`json:"([^",]+)/gm)].map(([, list, type = "", tag = ""]) => ({ name: tag, list: list !== undefined, type }));
    structs.set(name, fields);
  }
  const paths = new Set<string>();
  const walk = (type: string, prefix: string) => {
    for (const field of structs.get(type) ?? []) {
      const at = `${prefix}${prefix ? "." : ""}${field.name}${field.list ? "[]" : ""}`;
      paths.add(at);
      walk(field.type, at);
    }
  };
  walk("PricingGetResponse", "");
  return paths;
}

/** The CLI in a child process, without blocking this one (a stand-in server here must answer it). */
function pricesAsync(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(runTs, [pricesProgram, ...args], { cwd: repoRoot, env: { ...process.env, PATH: nodeOnPath, ...env }, timeout: 60_000 }, (error, stdout, stderr) => { resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }); },
    );
  });
}

function prices(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(runTs, [pricesProgram, ...args], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, PATH: nodeOnPath, ...env }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A stand-in for api.hetzner.cloud: GET /v1/pricing with the right bearer token answers `body`. */
async function standIn(token: string, body: unknown): Promise<{ server: Server; endpoint: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method ?? ""} ${request.url ?? ""}`);
    if (request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "unauthorized", message: "unable to authenticate" } }));
    } else if (request.method === "GET" && request.url === "/v1/pricing") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests };
}

describe("the price table from Hetzner's pricing API (npm run prices)", () => {
  it(`reads only fields hcloud-go ${hcloudGo.version}'s schema defines (hcloud/schema/pricing.go)`, () => {
    const paths = schemaPaths(schemaSource);
    expect(paths.has("pricing.server_types[].prices[].price_monthly.net")).toBe(true);
    // Negative control: a field the schema does not have is not found.
    expect(paths.has("pricing.server_types[].price_monthly")).toBe(false);
    expect(pricingFieldsRead.filter((field) => !paths.has(field))).toEqual([]);
  });

  it("--refresh: reads GET /v1/pricing with the token (from a stand-in server answering hcloud-go's recorded document) and writes a table the program accepts", async () => {
    const { server, endpoint, requests } = await standIn("test-token", recordedPricing);
    try {
      const file = path.join(scratch, "refreshed.json");
      const result = await pricesAsync(["--refresh", "--write", file, "--date", "2026-12-06"], { HCLOUD_TOKEN: "test-token", HCLOUD_ENDPOINT: endpoint });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(requests).toEqual(["GET /v1/pricing"]);
      const { "//": header, ...table } = parsePriceTable(JSON.parse(readFileSync(file, "utf8")) as unknown) as PriceTable & { "//": string };
      expect(header).toContain("Written by `npm run prices -- --refresh`");
      const entry = { source: pricingSource, date: "2026-12-06" };
      expect(table).toEqual({
        currency: "EUR",
        serverTypes: { cx11: { ...entry, monthlyNet: { fsn1: "1" } } },
        loadBalancerTypes: { lx11: { ...entry, monthlyNet: { fsn1: "1" } } },
        primaryIpv4: { ...entry, monthlyNet: { fsn1: "1.0000000000" } },
      });
      expect(result.stdout).toContain("not priced, though the config accepts them: server type cx23");
    } finally {
      server.close();
    }
  });

  it("--from: the same table from a saved response; a response outside the schema is refused with the field", () => {
    const saved = path.join(scratch, "pricing.json");
    writeFileSync(saved, JSON.stringify(recordedPricing));
    const file = path.join(scratch, "from.json");
    const result = prices(["--from", saved, "--write", file, "--date", "2026-12-06"]);
    expect(result.status, result.stderr).toBe(0);
    expect((JSON.parse(readFileSync(file, "utf8")) as { serverTypes: Record<string, unknown> }).serverTypes).toHaveProperty("cx11");
    const broken = structuredClone(recordedPricing) as { pricing: { server_types: { prices: { price_monthly: unknown }[] }[] } };
    broken.pricing.server_types[0]!.prices[0]!.price_monthly = "1.00";
    writeFileSync(saved, JSON.stringify(broken));
    const refused = prices(["--from", saved, "--write", file]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("prices: the pricing response is not what hcloud-go's schema describes: pricing.server_types[0].prices[0].price_monthly: expected an object");
  });

  it("--refresh: a refused token and an unreachable API fail with the reason, never hang", async () => {
    const { server, endpoint } = await standIn("right-token", recordedPricing);
    try {
      const result = await pricesAsync(["--refresh", "--write", path.join(scratch, "x.json")], { HCLOUD_TOKEN: "wrong", HCLOUD_ENDPOINT: endpoint });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`prices: could not read the pricing: GET ${endpoint}/pricing: HTTP 401 Unauthorized (HCLOUD_TOKEN is not a valid project token)`);
    } finally {
      server.close();
    }
    const unreachable = prices(["--refresh", "--write", path.join(scratch, "y.json")], { HCLOUD_TOKEN: "t", HCLOUD_ENDPOINT: "http://127.0.0.1:9/v1" });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toContain("prices: could not read the pricing: fetch failed");
    expect(prices(["--refresh"], { HCLOUD_TOKEN: "" }).stderr).toContain("--refresh needs HCLOUD_TOKEN");
  });

  // Not every type is sold in every location (Hetzner's API lists the locations per type): a
  // location without a price is the plan's error with the config path, not this check's.
  it("the committed table prices every server type and load-balancer type the config accepts, and primary IPv4", (context) => {
    if (isUnrefreshed(priceTable)) {
      return skipIfDeclared(context, "the committed price table holds no prices: only Hetzner's API (GET /v1/pricing, which needs a project token) knows them, and api.hetzner.cloud cannot be reached from here");
    }
    const missing = [
      ...catalog.hcloud.serverTypes.filter((type) => priceTable.serverTypes[type] === undefined).map((type) => `server type ${type}`),
      ...loadBalancerTypes.filter((type) => priceTable.loadBalancerTypes[type] === undefined).map((type) => `load-balancer type ${type}`),
      ...(priceTable.primaryIpv4 ? [] : ["primary IPv4"]),
    ];
    expect(missing).toEqual([]);
  });
});
