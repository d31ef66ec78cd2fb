import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { amountOf, formatAmount, monthlyPrice, parseAmount, parsePriceTable, priceTableProblems, type PriceTable } from "./price-table";

describe("amounts", () => {
  it.each([
    ["3.49", 34_900],
    ["3.4900000000", 34_900],
    ["12", 120_000],
    ["0.00005", 1],
    ["0.00004", 0],
    ["0.0048000000", 48],
  ])("parses the API's decimal %s exactly, in ten-thousandths", (text, amount) => {
    expect(parseAmount(text)).toBe(amount);
  });

  it.each(["", "-1", "1e3", "3,49", " 3.49", "abc"])("refuses %j", (text) => {
    expect(parseAmount(text)).toBeUndefined();
  });

  it.each([
    [34_900, "3.49"],
    [5, "0.00"],
    [50, "0.01"],
    [-12_345, "-1.23"],
    [1_234_567_890, "123456.79"],
  ])("formats %i as %s", (amount, text) => {
    expect(formatAmount(amount)).toBe(text);
  });

  it("round-trips every amount written with four decimals (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000 }), (amount) => {
        const text = `${Math.floor(amount / 10_000)}.${String(amount % 10_000).padStart(4, "0")}`;
        return parseAmount(text) === amount && amountOf(amount / 10_000) === amount;
      }),
    );
  });
});

describe("the price table", () => {
  const entry = { source: "test", date: "2026-12-06", monthlyNet: { fsn1: "3.49" } };

  it("names each broken entry", () => {
    expect(
      priceTableProblems({
        currency: "EUR",
        serverTypes: { cx23: { ...entry, date: "06.12.2026" }, cx33: { ...entry, monthlyNet: { fsn1: 3.49 } }, cx43: { monthlyNet: {} } },
        loadBalancerTypes: [],
        primaryIpv4: { ...entry, source: "" },
      }),
    ).toEqual([
      "serverTypes.cx23.date: not YYYY-MM-DD",
      "serverTypes.cx33.monthlyNet.fsn1: 3.49 is not a decimal price",
      "serverTypes.cx43.source: missing",
      "serverTypes.cx43.date: not YYYY-MM-DD",
      "loadBalancerTypes: not a mapping of type to prices",
      "primaryIpv4.source: missing",
    ]);
    expect(priceTableProblems({ currency: "EUR", serverTypes: { cx23: entry }, loadBalancerTypes: {}, primaryIpv4: null })).toEqual([]);
  });

  it.each([
    [null, ["the price table is not a mapping"]],
    [[], ["the price table is not a mapping"]],
    [{ currency: "", serverTypes: {}, loadBalancerTypes: {}, primaryIpv4: null }, ["currency: missing"]],
    [{ currency: 7, serverTypes: null, loadBalancerTypes: {}, primaryIpv4: null }, ["currency: missing", "serverTypes: not a mapping of type to prices"]],
    [{ currency: "EUR", serverTypes: { cx23: "3.49", cx33: null }, loadBalancerTypes: {}, primaryIpv4: null }, ["serverTypes.cx23: not a mapping with source, date and monthlyNet", "serverTypes.cx33: not a mapping with source, date and monthlyNet"]],
    [{ currency: "EUR", serverTypes: {}, loadBalancerTypes: { lb11: { ...entry, monthlyNet: [] } }, primaryIpv4: { ...entry, monthlyNet: null } }, ["loadBalancerTypes.lb11.monthlyNet: not a mapping of location to price", "primaryIpv4.monthlyNet: not a mapping of location to price"]],
    [{ currency: "EUR", serverTypes: { a: { ...entry, date: "x2026-12-06" }, b: { ...entry, date: "2026-12-06x" }, c: { ...entry, source: 7 } }, loadBalancerTypes: {}, primaryIpv4: null }, ["serverTypes.a.date: not YYYY-MM-DD", "serverTypes.b.date: not YYYY-MM-DD", "serverTypes.c.source: missing"]],
    [{ currency: "EUR", serverTypes: { a: { ...entry, monthlyNet: { fsn1: "3,49", nbg1: "3.49" } } }, loadBalancerTypes: {}, primaryIpv4: null }, ['serverTypes.a.monthlyNet.fsn1: "3,49" is not a decimal price']],
    [{ currency: "EUR", serverTypes: {}, loadBalancerTypes: {}, primaryIpv4: "0.50" }, ["primaryIpv4: not a mapping with source, date and monthlyNet"]],
  ])("%j: %j", (table, problems) => {
    expect(priceTableProblems(table)).toEqual(problems);
  });

  it("refuses a broken table with every problem, and accepts a sound one", () => {
    expect(() => parsePriceTable({ currency: "", serverTypes: [], loadBalancerTypes: {}, primaryIpv4: null })).toThrow("price table: currency: missing; serverTypes: not a mapping of type to prices");
    const sound = { currency: "EUR", serverTypes: { cx23: entry }, loadBalancerTypes: {}, primaryIpv4: null };
    expect(parsePriceTable(sound)).toBe(sound);
  });

  it("prices by kind, type and location; nothing where the table has no entry", () => {
    const table: PriceTable = { currency: "EUR", serverTypes: { cx23: entry }, loadBalancerTypes: { lb11: { ...entry, monthlyNet: { fsn1: "5.39" } } }, primaryIpv4: { ...entry, monthlyNet: { fsn1: "0.50" } } };
    expect(monthlyPrice(table, "server", "cx23", "fsn1")).toBe(34_900);
    expect(monthlyPrice(table, "loadBalancer", "lb11", "fsn1")).toBe(53_900);
    expect(monthlyPrice(table, "primaryIpv4", "ipv4", "fsn1")).toBe(5_000);
    expect(monthlyPrice(table, "server", "cx23", "ash")).toBeUndefined();
    expect(monthlyPrice(table, "server", "lb11", "fsn1")).toBeUndefined();
  });
});
