import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { resourceTypes } from "../lib/fleet-resources";
import { baselineFleet } from "../testing/baseline";
import { cloneFixtures, evaluate, fixture } from "../testing/harness";
import { everyoneIn, managementAdminPortsClosed as rule, portCovers } from "./management-admin-ports-closed";

const baseline = baselineFleet();

interface Rule {
  description: string;
  direction: string;
  protocol: string;
  port?: string;
  sourceIps: string[];
}

/** The baseline with one more source on the firewall rule described by `description`; `change` edits that rule further. */
function opened(description: string, source: string, change: (rule: Rule) => void = () => undefined) {
  const fleet = cloneFixtures(baseline);
  const rules = fixture(fleet, "firewall").props.rules as Rule[];
  const target = rules.find((candidate) => candidate.description === description)!;
  target.sourceIps.push(source);
  change(target);
  return fleet;
}

describe("portCovers", () => {
  it.each([
    ["22", 22, true],
    ["22", 6443, false],
    ["6443", 6443, true],
    ["1-65535", 22, true],
    ["1-65535", 6443, true],
    ["22-22", 22, true],
    ["23-6442", 22, false],
    ["23-6442", 6443, false],
    ["1-1024", 22, true],
    ["1-1024", 6443, false],
    ["any", 6443, true],
    [undefined, 22, true],
    ["", 22, false],
    ["ssh", 22, false],
  ])("port %j covers %d: %s", (rulePort, port, expected) => {
    expect(portCovers(rulePort, port)).toBe(expected);
  });
});

describe("management-admin-ports-closed", () => {
  it("passes the baseline", async () => {
    expect(await evaluate([rule], baseline)).toEqual([]);
  });

  it.each([
    ["SSH from admin networks", "0.0.0.0/0", "opens port 22 to 0.0.0.0/0"],
    ["Kubernetes API from admin networks", "::/0", "opens port 6443 to ::/0"],
    ["TCP inside the private network", "0.0.0.0/0", "opens port 22 and 6443 to 0.0.0.0/0"],
  ])("reports %j opened to %s", async (description, source, opening) => {
    const violations = await evaluate([rule], opened(description, source));
    expect(violations).toEqual([
      {
        policy: "management-admin-ports-closed",
        level: "mandatory",
        urn: `urn:pulumi:test::capi-fleet::${resourceTypes.hcloudFirewall}::firewall`,
        message: `Firewall "capi-fleet-prod-mgmt" ${opening}; set management.adminCidrs to your admin networks only.`,
      },
    ]);
  });

  it.each([
    ["UDP inside the private network", "0.0.0.0/0"],
    ["ICMP inside the private network", "::/0"],
    ["SSH from admin networks", "198.51.100.0/24"],
  ])("accepts %j opened to %s", async (description, source) => {
    expect(await evaluate([rule], opened(description, source))).toEqual([]);
  });

  it("names every source of a rule that opens to everyone", async () => {
    const fleet = opened("SSH from admin networks", "0.0.0.0/0", (target) => target.sourceIps.push("::/0"));
    expect((await evaluate([rule], fleet)).map((violation) => violation.message)).toEqual([expect.stringContaining("opens port 22 to 0.0.0.0/0, ::/0;")]);
  });

  it("accepts an outbound rule (the SSH rule opened to 0.0.0.0/0, turned outbound)", async () => {
    const fleet = opened("SSH from admin networks", "0.0.0.0/0", (target) => (target.direction = "out"));
    expect(await evaluate([rule], fleet)).toEqual([]);
  });

  it("accepts a TCP rule opened to everyone on ports other than 22 and 6443 (a public web port)", async () => {
    const fleet = opened("SSH from admin networks", "0.0.0.0/0", (target) => (target.port = "443"));
    expect(await evaluate([rule], fleet)).toEqual([]);
    const range = opened("SSH from admin networks", "::/0", (target) => (target.port = "23-6442"));
    expect(await evaluate([rule], range)).toEqual([]);
  });

  it("accepts a firewall without rules, and a rule without sources (it admits no one)", async () => {
    const noRules = cloneFixtures(baseline);
    delete fixture(noRules, "firewall").props.rules;
    expect(await evaluate([rule], noRules)).toEqual([]);
    const noSources = cloneFixtures(baseline);
    for (const target of fixture(noSources, "firewall").props.rules as Partial<Rule>[]) delete target.sourceIps;
    expect(await evaluate([rule], noSources)).toEqual([]);
  });

  it("still reports a firewall without a name, naming it empty rather than undefined", async () => {
    const fleet = opened("SSH from admin networks", "0.0.0.0/0");
    delete fixture(fleet, "firewall").props.name;
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => [violation.urn, violation.message.startsWith('Firewall "" opens port 22 to 0.0.0.0/0')])).toEqual([
      [`urn:pulumi:test::capi-fleet::${resourceTypes.hcloudFirewall}::firewall`, true],
    ]);
  });

  it("reports a tcp rule without a port (all ports) opened to everyone", async () => {
    const fleet = opened("SSH from admin networks", "0.0.0.0/0", (target) => delete target.port);
    const violations = await evaluate([rule], fleet);
    expect(violations.map((violation) => violation.message)).toEqual([expect.stringContaining("opens port 22 and 6443 to 0.0.0.0/0")]);
  });
});

describe("everyoneIn", () => {
  // 0.0.0.0/1, 128.0.0.0/2, 192.0.0.0/3, … 255.255.255.254/32: every IPv4 address but the last.
  const allButLast = Array.from({ length: 32 }, (_, index) => {
    const network = 2 ** 32 - 2 ** (32 - index);
    return `${ipaddr.fromByteArray([24, 16, 8, 0].map((shift) => (network >>> shift) & 255)).toString()}/${index + 1}`;
  });

  it("needs the very last address too", () => {
    expect(allButLast.at(-1)).toBe("255.255.255.254/32");
    expect(everyoneIn(allButLast)).toEqual([]);
    expect(everyoneIn([...allButLast, "255.255.255.255/32"])).toEqual([`${[...allButLast, "255.255.255.255/32"].join(" + ")} (together all of IPv4)`]);
  });

  it.each([
    [["0.0.0.0/0"], ["0.0.0.0/0"]],
    [["::/0"], ["::/0"]],
    [["0::0/0"], ["0::0/0"]],
    [["::ffff:0.0.0.0/96"], ["::ffff:0.0.0.0/96"]],
    [["0.0.0.0/1", "128.0.0.0/1"], ["0.0.0.0/1 + 128.0.0.0/1 (together all of IPv4)"]],
    [["203.0.113.0/24", "2001:db8::/32"], []],
    [["0.0.0.0/1"], []],
    [["office"], []],
    // A whole-space source is named by itself, not again as part of a sum.
    [["0.0.0.0/0", "0.0.0.0/1", "128.0.0.0/1"], ["0.0.0.0/0"]],
    // The sum names the IPv4 ranges only, not the IPv6 or unparsable entries beside them.
    [["0.0.0.0/1", "office", "2001:db8::/32", "128.0.0.0/1"], ["0.0.0.0/1 + 128.0.0.0/1 (together all of IPv4)"]],
    // IPv4-mapped IPv6: /96 is all of IPv4, anything longer is a part of it.
    [["::ffff:0.0.0.0/97"], []],
    [["::ffff:192.0.2.0/120"], []],
    // Ranges count by the addresses they hold: overlapping ones once, in any order, host bits ignored.
    [["0.0.0.0/1", "0.0.0.0/1"], []],
    [["0.0.0.0/2", "128.0.0.0/1"], []],
    [["128.0.0.0/1", "0.0.0.0/1"], ["128.0.0.0/1 + 0.0.0.0/1 (together all of IPv4)"]],
    [["0.0.0.0/1", "32.0.0.0/3", "128.0.0.0/1"], ["0.0.0.0/1 + 32.0.0.0/3 + 128.0.0.0/1 (together all of IPv4)"]],
    [["10.1.2.3/0"], ["10.1.2.3/0"]],
    // IPv6 halves are all of IPv6; ::/1 alone also holds every IPv4-mapped address, as ::/80 does.
    [["::/1", "0.0.0.0/1", "8000::/1"], ["::/1 + 8000::/1 (together all of IPv6)", "::/1"]],
    [["::/80"], ["::/80"]],
    [["::/81"], []],
    // The sum names the sources inside the space only: not an address just below or above it.
    [
      ["::fffe:ffff:ffff/128", "::ffff:0.0.0.0/128", "::ffff:0.0.0.0/97", "2001:db8::/32", "::ffff:128.0.0.0/97", "::ffff:255.255.255.255/128", "::1:0:0:0/128"],
      ["::ffff:0.0.0.0/128 + ::ffff:0.0.0.0/97 + ::ffff:128.0.0.0/97 + ::ffff:255.255.255.255/128 (together all of IPv4 mapped into IPv6)"],
    ],
  ])("%j → %j", (sources, open) => {
    expect(everyoneIn(sources)).toEqual(open);
  });
});
