import type { PriceTable } from "./price-table";

/** Prices for hand arithmetic in tests (not Hetzner's): the same in fsn1, nbg1 and hel1. */
export function testPriceTable(): PriceTable {
  const entry = (price: string) => ({ source: "test", date: "2026-12-06", monthlyNet: { fsn1: price, nbg1: price, hel1: price } });
  return {
    currency: "EUR",
    serverTypes: { cx23: entry("3.00"), cx33: entry("5.00"), cpx31: entry("10.00"), cax31: entry("12.00") },
    loadBalancerTypes: { lb11: entry("5.00") },
    primaryIpv4: entry("0.50"),
  };
}

/** A table never refreshed, as committed until someone with a Hetzner token refreshes it. */
export const emptyPriceTable: PriceTable = { currency: "EUR", serverTypes: {}, loadBalancerTypes: {}, primaryIpv4: null };
