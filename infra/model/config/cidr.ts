import ipaddr from "ipaddr.js";

/** A parsed IPv4 or IPv6 prefix with its first and last address as integers. */
export interface Cidr {
  readonly text: string;
  readonly family: "ipv4" | "ipv6";
  readonly prefixLength: number;
  readonly first: bigint;
  readonly last: bigint;
}

/** RFC 1918 ranges: the only ones an hcloud Network accepts. */
const privateIpv4Ranges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"];

/**
 * Parses "10.0.0.0/16" or "2001:db8::/32". Returns an error string instead of throwing,
 * so config validation can report every problem at once.
 */
export function parseCidr(text: string): Cidr | string {
  // The prefix length in its plain decimal form: Go also reads "/08" or "/0008", a form no one means.
  if (!/^[0-9a-fA-F:.]+\/(0|[1-9]\d{0,2})$/.test(text) || !ipaddr.isValidCIDR(text) || !dottedPartIsFourPartDecimal(text)) {
    return `"${text}" is not a CIDR; use the form 10.0.0.0/16 (or 2001:db8::/32)`;
  }
  const [address, prefixLength] = ipaddr.parseCIDR(text);
  const family = address.kind();
  const bits = family === "ipv4" ? 32 : 128;
  const value = bytesToBigInt(address.toByteArray());
  const hostBits = BigInt(bits - prefixLength);
  const first = (value >> hostBits) << hostBits;
  if (first !== value) {
    const network = `${bigIntToAddress(first, family)}/${prefixLength}`;
    return `"${text}" has host bits set; did you mean ${network}?`;
  }
  return { text, family, prefixLength, first, last: first + (1n << hostBits) - 1n };
}

/** Like parseCidr, for values already validated; throws on bad input. */
export function mustParseCidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (typeof parsed === "string") {
    throw new Error(parsed);
  }
  return parsed;
}

/** True when the two prefixes share at least one address. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}

/** True when `inner` lies entirely inside `outer`. */
export function cidrContains(outer: Cidr, inner: Cidr): boolean {
  return outer.family === inner.family && outer.first <= inner.first && inner.last <= outer.last;
}

function ascendingByFirstAddress(a: Cidr, b: Cidr): number {
  // Stryker disable next-line EqualityOperator: equivalent, ties may sort either way
  if (a.first < b.first) return -1;
  // Stryker disable next-line EqualityOperator,ConditionalExpression: equivalent, V8's sort only asks whether the comparator is negative (measured: 256 shuffled /8s sort the same)
  return a.first > b.first ? 1 : 0;
}

/** The families ("ipv4", "ipv6") whose every address lies in the union of `cidrs`, e.g. 0.0.0.0/1 with 128.0.0.0/1. */
export function familiesCoveredEntirely(cidrs: readonly Cidr[]): ("ipv4" | "ipv6")[] {
  return (["ipv4", "ipv6"] as const).filter((family) => {
    const last = (1n << BigInt(family === "ipv4" ? 32 : 128)) - 1n;
    const ranges = cidrs.filter((cidr) => cidr.family === family).sort(ascendingByFirstAddress);
    let next = 0n;
    for (const range of ranges) {
      if (range.first > next) {
        return false;
      }
      // Stryker disable next-line EqualityOperator: equivalent, at equality `next` is set to the value it has
      if (range.last + 1n > next) {
        next = range.last + 1n;
      }
    }
    return next > last;
  });
}

/** True for IPv4 prefixes inside 10/8, 172.16/12 or 192.168/16. */
export function isPrivateIpv4(cidr: Cidr): boolean {
  return privateIpv4Ranges.some((range) => cidrContains(mustParseCidr(range), cidr));
}

/** The address `offset` places after the network address ("10.0.1.0/24", 10 → "10.0.1.10"). */
export function hostAddress(cidr: Cidr, offset: number): string {
  const address = cidr.first + BigInt(offset);
  if (offset < 1 || address >= cidr.last) {
    throw new Error(`offset ${offset} does not fit a host address in ${cidr.text}`);
  }
  return bigIntToAddress(address, cidr.family);
}

/** The first prefix of the given length inside `cidr` ("10.0.0.0/16", 24 → "10.0.0.0/24"); `cidr` itself when it is smaller. */
export function firstSubnet(cidr: Cidr, prefixLength: number): string {
  return `${bigIntToAddress(cidr.first, cidr.family)}/${Math.max(prefixLength, cidr.prefixLength)}`;
}

/**
 * ipaddr.js also reads "10/8", "10.0.0/8" and octal "010.0.0.0/8" (as 8.0.0.0); Go's
 * net.ParseCIDR, with which Kubernetes, CAPI and CAPH read cidrBlocks, takes an IPv4 address
 * (alone or at the end of an IPv6 one) only as four decimal octets without leading zeros.
 */
function dottedPartIsFourPartDecimal(text: string): boolean {
  const address = text.slice(0, text.indexOf("/"));
  if (address.includes(":") && !address.includes(".")) return true;
  return ipaddr.IPv4.isValidFourPartDecimal(address.slice(address.lastIndexOf(":") + 1));
}

function bytesToBigInt(bytes: number[]): bigint {
  return bytes.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function bigIntToAddress(value: bigint, family: "ipv4" | "ipv6"): string {
  const byteCount = family === "ipv4" ? 4 : 16;
  const bytes: number[] = [];
  for (let i = byteCount - 1; i >= 0; i--) {
    bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  }
  return ipaddr.fromByteArray(bytes).toString();
}
