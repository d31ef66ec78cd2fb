import { spawnSync } from "node:child_process";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { beforeAll, describe, expect, it } from "vitest";
import { buildGoProgram } from "../../../tests/support/go-programs";
import { cidrContains, cidrsOverlap, familiesCoveredEntirely, firstSubnet, hostAddress, isPrivateIpv4, mustParseCidr, parseCidr, type Cidr } from "./cidr";

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

  // The last three ipaddr.js reads (010 as octal 8); Go's net.ParseCIDR, as Kubernetes uses it, refuses them.
  it.each(["10.0.0.0", "10.0.0.0/33", "300.0.0.0/8", "a.b.c.d/8", " 10.0.0.0/8", "10/8", "10.0.0/16", "010.0.0.0/8", "::ffff:010.0.0.0/104"])("rejects %j", (text) => {
    expect(typeof parseCidr(text)).toBe("string");
  });

  // Go reads these too; the config keeps to the form everyone writes.
  it.each(["10.0.0.0/08", "10.0.0.0/0008", "10.0.0.0/00"])("rejects the zero-padded prefix length in %j", (text) => {
    expect(parseCidr(text)).toBe(`"${text}" is not a CIDR; use the form 10.0.0.0/16 (or 2001:db8::/32)`);
  });

  it("accepts an IPv4-mapped IPv6 prefix, dotted part and all, as Go does", () => {
    expect(parseCidr("::ffff:10.0.0.0/104")).toMatchObject({ family: "ipv6", prefixLength: 104 });
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

// The config's CIDRs end up in cidrBlocks that Kubernetes, CAPI and CAPH parse with Go's
// net.ParseCIDR (kubernetes/kubernetes: pkg/apis/core/validation; CAPH v1.1.8:
// api/v1beta1/hetznercluster_webhook.go), built here from the Go toolchain (tests/go/net-parse-cidr).
// Whatever parseCidr accepts, Go accepts as the same prefix; what it calls host bits, Go reads
// with host bits and the suggested network is Go's.

let goParser: string;
beforeAll(() => {
  goParser = buildGoProgram("net-parse-cidr").binary;
}, 900_000);

type GoReading = { ok: false } | { ok: true; bits: number; prefixLength: number; network: bigint; hostBitsClear: boolean };

function goReadings(texts: readonly string[]): GoReading[] {
  const result = spawnSync(goParser, [], { input: texts.join("\n") + "\n", encoding: "utf8", timeout: 30_000 });
  const lines = result.stdout.trimEnd().split("\n");
  expect(lines).toHaveLength(texts.length);
  return lines.map((line) => {
    const [verdict, bits, prefixLength, network, clear] = line.split(" ");
    return verdict === "ok" ? { ok: true, bits: Number(bits), prefixLength: Number(prefixLength), network: BigInt(`0x${network}`), hostBitsClear: clear === "true" } : { ok: false };
  });
}

/** What parseCidr says, in the oracle's terms. */
function ours(text: string): GoReading | { hostBits: string } {
  const parsed = parseCidr(text);
  if (typeof parsed !== "string") {
    return { ok: true, bits: parsed.family === "ipv4" ? 32 : 128, prefixLength: parsed.prefixLength, network: parsed.first, hostBitsClear: true };
  }
  const suggestion = /did you mean (\S+)\?$/.exec(parsed)?.[1];
  return suggestion ? { hostBits: suggestion } : { ok: false };
}

const ipv6Prefix = fc.tuple(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), fc.integer({ min: 0, max: 128 })).map(([address, length]) => {
  const host = BigInt(128 - length);
  const network = (address >> host) << host;
  const bytes = Array.from({ length: 16 }, (_, i) => Number((network >> BigInt(8 * (15 - i))) & 0xffn));
  return mustParseCidr(`${ipaddr.fromByteArray(bytes).toString()}/${length}`);
});

const octet = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.constantFrom("010", "00", "256", "0x0a", "-1", ""));
const ipv4Text = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }).map((octets) => octets.join(".")),
  fc.array(octet, { minLength: 1, maxLength: 5 }).map((octets) => octets.join(".")),
);
const ipv6Text = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((groups) => ipaddr.fromByteArray(groups.flatMap((g) => [g >> 8, g & 0xff])).toString()),
  fc.constantFrom("::", "2001:db8::", "::ffff:10.0.0.0", "::ffff:010.0.0.0", "00001::", "0001::", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", "2001:db8::g"),
);
const prefixText = fc.oneof(fc.integer({ min: 0, max: 130 }).map(String), fc.constantFrom("08", "", "-1", "1a", "0032"));
const cidrText = fc.oneof(
  fc.tuple(fc.oneof(ipv4Text, ipv6Text), prefixText).map(([address, prefix]) => `${address}/${prefix}`),
  fc.constantFrom("10.0.0.0", "10/8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0//8", "10.0.0.0/8/8"),
);

describe("parseCidr, against Go's net.ParseCIDR", () => {
  it("accepts only what Go accepts, as the same prefix; host bits are Go's, and the suggested network is Go's network", () => {
    const texts = fc.sample(cidrText, { numRuns: 3000, seed: 20 });
    const readings = goReadings(texts);
    const disagreements = texts.flatMap((text, i) => {
      const go = readings[i]!;
      const mine = ours(text);
      if ("hostBits" in mine) {
        // Go reads it, with host bits set, and our suggestion is Go's network.
        const suggested = ours(mine.hostBits);
        return go.ok && !go.hostBitsClear && "ok" in suggested && suggested.ok && suggested.network === go.network && suggested.prefixLength === go.prefixLength ? [] : [`${text}: ours suggests ${mine.hostBits}, Go ${JSON.stringify(go, (_k, v: unknown) => (typeof v === "bigint" ? v.toString(16) : v))}`];
      }
      if (!mine.ok) return [];
      return go.ok && go.hostBitsClear && go.bits === mine.bits && go.prefixLength === mine.prefixLength && go.network === mine.network ? [] : [`${text}: ours accepts, Go ${go.ok ? "reads another prefix" : "refuses"}`];
    });
    expect(disagreements).toEqual([]);
    // Well-formed prefixes of both families are accepted: the check is not vacuous.
    const accepted = texts.filter((text) => typeof parseCidr(text) !== "string");
    expect(accepted.some((text) => text.includes(":"))).toBe(true);
    expect(accepted.some((text) => !text.includes(":"))).toBe(true);
    expect(texts.some((text) => ("hostBits" in ours(text)))).toBe(true);
  });

  it("accepts every network Go reads without host bits, in canonical form", () => {
    const texts = fc.sample(fc.oneof(ipv4Prefix.map((p) => p.text), ipv6Prefix.map((p) => p.text)), { numRuns: 500, seed: 21 });
    const readings = goReadings(texts);
    expect(texts.filter((text, i) => readings[i]!.ok && typeof parseCidr(text) === "string")).toEqual([]);
  });
});

/** Every address of `cidr` by ipaddr.js, not by the model's arithmetic: is `address` in it? */
const inside = (address: string, cidr: Cidr) => {
  const parsed = ipaddr.parse(address);
  const [network, length] = ipaddr.parseCIDR(cidr.text);
  return parsed.kind() === network.kind() && parsed.match(network, length);
};

describe("prefix bounds and containment, against ipaddr.js", () => {
  it("first and last are the prefix's network and broadcast addresses", () => {
    fc.assert(
      fc.property(fc.oneof(ipv4Prefix, ipv6Prefix), (prefix) => {
        const [network, length] = ipaddr.parseCIDR(prefix.text);
        const count = prefix.family === "ipv4" ? 4 : 16;
        const bytes = (value: bigint) => Array.from({ length: count }, (_, i) => Number((value >> BigInt(8 * (count - 1 - i))) & 0xffn));
        const first = ipaddr.fromByteArray(bytes(prefix.first));
        const last = ipaddr.fromByteArray(bytes(prefix.last));
        expect(first.toString()).toBe(network.toString());
        expect(prefix.prefixLength).toBe(length);
        const broadcast = network.kind() === "ipv4" ? ipaddr.IPv4.broadcastAddressFromCIDR(prefix.text) : ipaddr.IPv6.broadcastAddressFromCIDR(prefix.text);
        expect(last.toString()).toBe(broadcast.toString());
        expect(inside(last.toString(), prefix)).toBe(true);
        // The address after the last one is outside (unless the prefix ends the address space).
        const end = (1n << BigInt(prefix.family === "ipv4" ? 32 : 128)) - 1n;
        if (prefix.last < end) expect(inside(ipaddr.fromByteArray(bytes(prefix.last + 1n)).toString(), prefix)).toBe(false);
        if (prefix.first > 0n) expect(inside(ipaddr.fromByteArray(bytes(prefix.first - 1n)).toString(), prefix)).toBe(false);
      }),
    );
  });

  it("overlap and containment agree with ipaddr.js on the prefixes' network addresses, also for touching and nested prefixes", () => {
    const related = fc.oneof(ipv4Prefix, ipv6Prefix).chain((outer) =>
      fc.tuple(fc.constant(outer), fc.integer({ min: outer.prefixLength, max: outer.family === "ipv4" ? 32 : 128 }), fc.bigInt({ min: -1n, max: outer.last - outer.first + 1n })).map(([o, length, offset]) => {
        const bits = o.family === "ipv4" ? 32 : 128;
        const address = (o.first + offset + (1n << BigInt(bits))) % (1n << BigInt(bits));
        const host = BigInt(bits - length);
        const network = (address >> host) << host;
        const bytes = Array.from({ length: bits / 8 }, (_, i) => Number((network >> BigInt(8 * (bits / 8 - 1 - i))) & 0xffn));
        return [o, mustParseCidr(`${ipaddr.fromByteArray(bytes).toString()}/${length}`)] as const;
      }),
    );
    fc.assert(
      fc.property(related, ([a, b]) => {
        const [bNetwork] = ipaddr.parseCIDR(b.text);
        const [aNetwork] = ipaddr.parseCIDR(a.text);
        const contains = (outer: Cidr, inner: Cidr, innerNetwork: ipaddr.IPv4 | ipaddr.IPv6) => inside(innerNetwork.toString(), outer) && inner.prefixLength >= outer.prefixLength;
        expect(cidrContains(a, b)).toBe(contains(a, b, bNetwork));
        expect(cidrContains(b, a)).toBe(contains(b, a, aNetwork));
        expect(cidrsOverlap(a, b)).toBe(contains(a, b, bNetwork) || contains(b, a, aNetwork));
      }),
      { numRuns: 300 },
    );
    // Adjacent prefixes touch but do not overlap; a prefix's last address is inside it.
    expect(cidrsOverlap(mustParseCidr("10.0.0.0/24"), mustParseCidr("10.0.1.0/24"))).toBe(false);
    expect(cidrsOverlap(mustParseCidr("10.0.1.0/24"), mustParseCidr("10.0.0.0/24"))).toBe(false);
    expect(cidrsOverlap(mustParseCidr("10.0.0.0/24"), mustParseCidr("10.0.0.255/32"))).toBe(true);
    expect(cidrsOverlap(mustParseCidr("10.0.0.255/32"), mustParseCidr("10.0.0.0/24"))).toBe(true);
    expect(cidrContains(mustParseCidr("10.0.0.0/24"), mustParseCidr("10.0.0.0/32"))).toBe(true);
    expect(cidrContains(mustParseCidr("10.0.0.0/24"), mustParseCidr("10.0.0.255/32"))).toBe(true);
    expect(cidrContains(mustParseCidr("10.0.0.0/24"), mustParseCidr("10.0.0.0/23"))).toBe(false);
    expect(cidrContains(mustParseCidr("::/0"), mustParseCidr("10.0.0.0/8"))).toBe(false);
    // Numerically the same range, but IPv4 and IPv6 addresses never overlap.
    expect(cidrsOverlap(mustParseCidr("0.0.0.0/0"), mustParseCidr("::/96"))).toBe(false);
  });
});

describe("isPrivateIpv4, against ipaddr.js's RFC 1918 range", () => {
  it("holds for a prefix exactly when its first and last address are private", () => {
    const nearPrivate = fc.constantFrom("10.0.0.0", "172.16.0.0", "192.168.0.0", "9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0", "172.31.255.255", "10.255.255.255", "192.168.255.255");
    const prefixes = fc.oneof(
      ipv4Prefix,
      // Prefixes around the edges of the private ranges.
      fc.tuple(nearPrivate, fc.integer({ min: 4, max: 32 })).map(([address, length]) => {
        const hostBits = BigInt(32 - length);
        const network = (mustParseCidr(`${address}/32`).first >> hostBits) << hostBits;
        return mustParseCidr(`${[24n, 16n, 8n, 0n].map((shift) => (network >> shift) & 0xffn).join(".")}/${length}`);
      }),
    );
    const ipv4 = (value: bigint) => [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn).join(".");
    fc.assert(
      fc.property(prefixes, (prefix) => {
        expect(isPrivateIpv4(prefix)).toBe(ipaddr.parse(ipv4(prefix.first)).range() === "private" && ipaddr.parse(ipv4(prefix.last)).range() === "private");
      }),
      { numRuns: 500 },
    );
    expect(isPrivateIpv4(mustParseCidr("fd00::/8"))).toBe(false);
  });
});

describe("familiesCoveredEntirely", () => {
  /** Whether `cidrs` (here /0 to /4) cover all of a family, by checking each of its sixteen /4 blocks. */
  const coversAll = (cidrs: readonly Cidr[], family: "ipv4" | "ipv6") =>
    Array.from({ length: 16 }, (_, block) => block).every((block) => {
      const bits = family === "ipv4" ? 32 : 128;
      const address = BigInt(block) << BigInt(bits - 4);
      return cidrs.some((cidr) => cidr.family === family && cidr.first <= address && address + (1n << BigInt(bits - 4)) - 1n <= cidr.last);
    });
  const shortPrefix = fc.tuple(fc.constantFrom("ipv4", "ipv6"), fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 4 })).map(([family, block, length]) => {
    const top = (block >> (4 - length)) << (4 - length);
    return mustParseCidr(family === "ipv4" ? `${top << 4}.0.0.0/${length}` : `${(top << 12).toString(16)}::/${length}`);
  });

  it("names a family exactly when its addresses are all in the union, whatever the order of the prefixes", () => {
    fc.assert(
      fc.property(fc.array(shortPrefix, { maxLength: 12 }), (cidrs) => {
        const expected = (["ipv4", "ipv6"] as const).filter((family) => coversAll(cidrs, family));
        expect(familiesCoveredEntirely(cidrs)).toEqual(expected);
        expect(familiesCoveredEntirely([...cidrs].reverse())).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("sees the whole space in two halves, overlapping prefixes, and the last address", () => {
    const parse = (texts: string[]) => texts.map(mustParseCidr);
    expect(familiesCoveredEntirely(parse(["128.0.0.0/1", "0.0.0.0/1"]))).toEqual(["ipv4"]);
    expect(familiesCoveredEntirely(parse(["0.0.0.0/1", "0.0.0.0/2", "128.0.0.0/1"]))).toEqual(["ipv4"]);
    expect(familiesCoveredEntirely(parse(["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5", "248.0.0.0/5"]))).toEqual(["ipv4"]);
    expect(familiesCoveredEntirely(parse(["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5", "248.0.0.0/6", "252.0.0.0/7", "254.0.0.0/8"]))).toEqual([]);
    expect(familiesCoveredEntirely(parse(["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5", "248.0.0.0/6", "252.0.0.0/7", "254.0.0.0/8", "255.255.255.255/32"]))).toEqual([]);
    // Every address but 255.255.255.255: 0.0.0.0/1, 128.0.0.0/2, … 255.255.255.254/32.
    const allButLast = Array.from({ length: 32 }, (_, i) => {
      const network = (0xffffffff << (32 - i)) >>> 0;
      return mustParseCidr(`${[24, 16, 8, 0].map((shift) => (i === 0 ? 0 : network >>> shift) & 0xff).join(".")}/${i + 1}`);
    });
    expect(familiesCoveredEntirely(allButLast)).toEqual([]);
    expect(familiesCoveredEntirely([...allButLast, mustParseCidr("255.255.255.255/32")])).toEqual(["ipv4"]);
    expect(familiesCoveredEntirely(parse(["::/1", "8000::/1", "10.0.0.0/8"]))).toEqual(["ipv6"]);
    expect(familiesCoveredEntirely(parse(["0.0.0.0/2", "128.0.0.0/1"]))).toEqual([]);
    expect(familiesCoveredEntirely([])).toEqual([]);
  });
});

describe("hostAddress and firstSubnet", () => {
  it("give host addresses from the first after the network address to the last before the broadcast address", () => {
    const subnet = mustParseCidr("10.0.1.0/28");
    expect(hostAddress(subnet, 1)).toBe("10.0.1.1");
    expect(hostAddress(subnet, 14)).toBe("10.0.1.14");
    expect(() => hostAddress(subnet, 0)).toThrow(/offset 0 does not fit a host address in 10.0.1.0\/28/);
    expect(() => hostAddress(subnet, -1)).toThrow(/does not fit/);
    expect(() => hostAddress(subnet, 15)).toThrow(/does not fit/);
    expect(hostAddress(mustParseCidr("2001:db8::/64"), 10)).toBe("2001:db8::a");
  });

  it("take the first prefix of the length asked for, or the prefix itself when it is already smaller", () => {
    expect(firstSubnet(mustParseCidr("10.10.0.0/16"), 24)).toBe("10.10.0.0/24");
    expect(firstSubnet(mustParseCidr("10.10.0.0/26"), 24)).toBe("10.10.0.0/26");
    expect(firstSubnet(mustParseCidr("10.10.0.0/24"), 24)).toBe("10.10.0.0/24");
    expect(firstSubnet(mustParseCidr("2001:db8::/32"), 64)).toBe("2001:db8::/64");
  });

  it("mustParseCidr throws parseCidr's problem", () => {
    expect(() => mustParseCidr("10.0.0.1/24")).toThrow(/host bits set; did you mean 10\.0\.0\.0\/24\?/);
  });
});
