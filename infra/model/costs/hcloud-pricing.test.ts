import { describe, expect, it } from "vitest";
import { PricingResponseError, priceTableFromPricing, pricingSource } from "./hcloud-pricing";

// A response in the shape of hcloud-go's schema.PricingGetResponse (scripts/prices.test.ts runs the
// CLI on hcloud-go's own recorded document and checks these fields against its structs).
const price = (net: string) => ({ net, gross: net });
const response = () => ({
  pricing: {
    currency: "EUR",
    vat_rate: "19.00",
    primary_ips: [
      { type: "ipv6", prices: [{ location: "fsn1", price_hourly: price("0"), price_monthly: price("0.0000") }] },
      { type: "ipv4", prices: [{ location: "fsn1", price_hourly: price("0.0008"), price_monthly: price("0.5000") }, { location: "ash", price_hourly: price("0.0008"), price_monthly: price("0.6000") }] },
    ],
    server_types: [
      { id: 2, name: "CX33", prices: [{ location: "nbg1", price_hourly: price("0.0088"), price_monthly: price("5.4900"), included_traffic: 21990232555520, price_per_tb_traffic: price("1") }] },
      { id: 1, name: "cx23", prices: [{ location: "fsn1", price_hourly: price("0.0056"), price_monthly: price("3.4900") }] },
    ],
    load_balancer_types: [{ id: 1, name: "lb11", prices: [{ location: "fsn1", price_hourly: price("0.0088"), price_monthly: price("5.3900") }] }],
  },
});

describe("the price table from GET /v1/pricing", () => {
  it("takes the monthly net price of each type and location, names lower-cased and sorted, primary IPv4 only, each with source and date", () => {
    const entry = { source: pricingSource, date: "2026-12-06" };
    expect(priceTableFromPricing(response(), "2026-12-06")).toEqual({
      currency: "EUR",
      serverTypes: { cx23: { ...entry, monthlyNet: { fsn1: "3.4900" } }, cx33: { ...entry, monthlyNet: { nbg1: "5.4900" } } },
      loadBalancerTypes: { lb11: { ...entry, monthlyNet: { fsn1: "5.3900" } } },
      primaryIpv4: { ...entry, monthlyNet: { fsn1: "0.5000", ash: "0.6000" } },
    });
    expect(Object.keys(priceTableFromPricing(response(), "2026-12-06").serverTypes)).toEqual(["cx23", "cx33"]);
  });

  it("has no primary IPv4 price when the response lists none", () => {
    const body = response();
    body.pricing.primary_ips = body.pricing.primary_ips.filter((ip) => ip.type !== "ipv4");
    expect(priceTableFromPricing(body, "2026-12-06").primaryIpv4).toBeNull();
  });

  it.each([
    [(body: ReturnType<typeof response>) => Object.assign(body, { pricing: [] }), "pricing: expected an object"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing, { currency: "" }), "pricing.currency: expected a non-empty string"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing, { server_types: {} }), "pricing.server_types: expected a list"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.server_types[1]!, { name: 7 }), "pricing.server_types[1].name: expected a non-empty string"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.server_types[0]!.prices[0]!, { location: undefined }), "pricing.server_types[0].prices[0].location: expected a non-empty string"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.load_balancer_types[0]!.prices[0]!, { price_monthly: "5.39" }), "pricing.load_balancer_types[0].prices[0].price_monthly: expected an object"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.server_types[0]!.prices[0]!, { price_monthly: price("-1") }), 'pricing.server_types[0].prices[0].price_monthly.net: "-1" is not a decimal price'],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.primary_ips[0]!, { type: null }), "pricing.primary_ips[0].type: expected a non-empty string"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing, { primary_ips: "none" }), "pricing.primary_ips: expected a list"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing, { server_types: [body.pricing.server_types[0], "cx23"] }), "pricing.server_types[1]: expected an object"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.server_types[1]!, { prices: [body.pricing.server_types[1]!.prices[0], 7] }), "pricing.server_types[1].prices[1]: expected an object"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.server_types[1]!.prices[0]!, { price_monthly: { gross: "1" } }), "pricing.server_types[1].prices[0].price_monthly.net: expected a non-empty string"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing, { primary_ips: [body.pricing.primary_ips[0], null] }), "pricing.primary_ips[1]: expected an object"],
    [(body: ReturnType<typeof response>) => Object.assign(body.pricing.primary_ips[1]!, { prices: {} }), "pricing.primary_ips[1].prices: expected a list"],
  ])("refuses a response outside the schema, naming the field (%#)", (mutate, message) => {
    const body = response();
    mutate(body);
    expect(() => priceTableFromPricing(body, "2026-12-06")).toThrow(new PricingResponseError(message));
  });

  it("refuses a response that is not an object", () => {
    expect(() => priceTableFromPricing(null, "2026-12-06")).toThrow("response: expected an object");
  });
});
