import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv-draft-04";
import type { ValidateFunction } from "ajv";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { catalog } from "../versions/catalog";
import { renderK3sCloudInit, type K3sServerSpec } from "./management-cluster";

// The k3s user data checked against cloud-init's own schema (from Debian's cloud-init
// package, fetched by tools/cloud-init-schema), not against our idea of it.

let validate: ValidateFunction;

beforeAll(() => {
  const schemaPath = execFileSync(path.join(repoRoot, "tools", "cloud-init-schema"), { encoding: "utf8" }).trim();
  // Formats (uri, hostname, date) are not what this test is about; they are accepted as written.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")) as object);
});

function userData(index: number): unknown {
  const spec: K3sServerSpec = {
    index,
    k3sVersion: catalog.k3s.version,
    nodeIp: `10.0.1.${11 + index}`,
    firstServerIp: "10.0.1.11",
    apiAddresses: ["203.0.113.10", "10.0.1.10"],
    token: "t".repeat(64),
    caFiles: { serverCaCertPem: "a", serverCaKeyPem: "b", clientCaCertPem: "c", clientCaKeyPem: "d" },
  };
  return parse(renderK3sCloudInit(spec));
}

describe("k3s user data against cloud-init's schema", () => {
  it.each([0, 1, 2])("server %i's document is valid", (index) => {
    const valid = validate(userData(index));
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(valid).toBe(true);
  });

  it.each([
    ["an unknown write_files key", (doc: Record<string, unknown[]>) => ((doc.write_files![0] as Record<string, unknown>).mode = "0600")],
    ["a numeric file mode", (doc: Record<string, unknown[]>) => ((doc.write_files![0] as Record<string, unknown>).permissions = 600)],
    ["runcmd as a mapping", (doc: Record<string, unknown>) => (doc.runcmd = { install: "k3s" })],
  ])("rejects %s (negative control)", (_description, mutate) => {
    const document = userData(0) as Record<string, unknown[]>;
    mutate(document);
    expect(validate(document)).toBe(false);
  });
});
