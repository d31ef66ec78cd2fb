import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cidrContains, cidrsOverlap, hostAddress, isPrivateIpv4, mustParseCidr, parseCidr } from "./cidr";

const ipv4Prefix = fc
  .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }))
  .map(([address, length]) => {
    const network = length === 0 ? 0 : (address >>> (32 - length)) << (32 - length);
    const octets = [24, 16, 8, 0].map((shift) => ((network >>> 0) >>> shift) & 0xff);
    return mustParseCidr(`${octets.join(".")}/${length}`);
  });

describe("cidr", () => {
  it.each([
    ["10.0.0.0/16", "10.0.255.0/24", true],
    ["10.0.0.0/16", "10.1.0.0/16", false],
    ["192.168.0.0/16", "192.168.128.0/17", true],
    ["10.96.0.0/12", "10.112.0.0/12", false],
    ["10.0.0.0/8", "2001:db8::/32", false],
  ])("%s overlaps %s: %s", (a, b, expected) => {
    expect(cidrsOverlap(mustParseCidr(a), mustParseCidr(b))).toBe(expected);
  });

  it("rejects host bits and suggests the network", () => {
    expect(parseCidr("10.0.1.5/24")).toBe('"10.0.1.5/24" has host bits set; did you mean 10.0.1.0/24?');
    expect(parseCidr("2001:db8::1/32")).toContain("did you mean 2001:db8::/32");
  });

  it.each(["10.0.0.0", "10.0.0.0/33", "300.0.0.0/8", "a.b.c.d/8", " 10.0.0.0/8"])("rejects %j", (text) => {
    expect(typeof parseCidr(text)).toBe("string");
  });

  it("knows the RFC 1918 ranges", () => {
    expect(isPrivateIpv4(mustParseCidr("172.20.0.0/16"))).toBe(true);
    expect(isPrivateIpv4(mustParseCidr("172.32.0.0/16"))).toBe(false);
    expect(isPrivateIpv4(mustParseCidr("100.64.0.0/10"))).toBe(false);
  });

  it("computes host addresses and refuses ones outside the prefix", () => {
    expect(hostAddress(mustParseCidr("10.0.1.0/24"), 10)).toBe("10.0.1.10");
    expect(() => hostAddress(mustParseCidr("10.0.1.0/28"), 15)).toThrow(/does not fit/);
  });

  it("overlap is symmetric and reflexive", () => {
    fc.assert(
      fc.property(ipv4Prefix, ipv4Prefix, (a, b) => {
        expect(cidrsOverlap(a, b)).toBe(cidrsOverlap(b, a));
        expect(cidrsOverlap(a, a)).toBe(true);
      }),
    );
  });

  it("containment implies overlap, and two prefixes either nest or are disjoint", () => {
    fc.assert(
      fc.property(ipv4Prefix, ipv4Prefix, (a, b) => {
        if (cidrContains(a, b)) expect(cidrsOverlap(a, b)).toBe(true);
        expect(cidrsOverlap(a, b)).toBe(cidrContains(a, b) || cidrContains(b, a));
      }),
    );
  });

  it("the two halves of a prefix are disjoint and both inside it", () => {
    fc.assert(
      fc.property(ipv4Prefix.filter((p) => p.prefixLength < 32), (prefix) => {
        const size = prefix.last - prefix.first + 1n;
        const half = (first: bigint) =>
          mustParseCidr(`${[24n, 16n, 8n, 0n].map((s) => (first >> s) & 0xffn).join(".")}/${prefix.prefixLength + 1}`);
        const low = half(prefix.first);
        const high = half(prefix.first + size / 2n);
        expect(cidrsOverlap(low, high)).toBe(false);
        expect(cidrContains(prefix, low) && cidrContains(prefix, high)).toBe(true);
      }),
    );
  });
});
