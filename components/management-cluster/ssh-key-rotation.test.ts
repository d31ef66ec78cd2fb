import { generateKeyPairSync } from "node:crypto";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { one, runStack } from "../../tests/support/fleet-run";
import type { Registration } from "../../tests/support/pulumi-mocks";

// Rotating management.sshPublicKey. The provider replaces hcloud_ssh_key when public_key changes
// (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/sshkey/resource.go, RequiresReplace),
// and Pulumi creates the replacement before deleting the old key; Hetzner refuses a second key
// with a name or a fingerprint already in the project ("uniqueness_error"), so a new key pair must
// get a new name (the name itself: infra/model/management/management-cluster.test.ts).

const sshKeyType = "hcloud:index/sshKey:SshKey";
const serverType = "hcloud:index/server:Server";

const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
/** An OpenSSH ed25519 public key line with these 32 key bytes. */
const ed25519Line = (raw: Uint8Array, comment = "ops@example") =>
  `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(Buffer.from(raw))]).toString("base64")} ${comment}`;
/** An OpenSSH ed25519 public key line for a fresh key pair. */
const newKeyLine = (comment?: string) => ed25519Line(generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32), comment);

/** The dev stack with another management key; also records each resource's options. */
async function runWithKey(sshPublicKey: string) {
  const options = new Map<string, pulumi.CustomResourceOptions>();
  const { registrations } = await runStack(
    "dev",
    (values) => {
      const management = JSON.parse(values["capi-fleet:management"]!) as Record<string, unknown>;
      values["capi-fleet:management"] = JSON.stringify({ ...management, sshPublicKey });
    },
    (args) => {
      options.set(`${args.type}::${args.name}`, args.opts);
      return undefined;
    },
  );
  return { registrations, options };
}

const servers = (registrations: readonly Registration[]) => registrations.filter((r) => r.type === serverType);

/** Every string in a value, however deep. */
const strings = (value: unknown): string[] =>
  typeof value === "string" ? [value] : typeof value === "object" && value !== null ? Object.values(value).flatMap(strings) : [];

describe("rotating the management SSH key", () => {
  it("gives a new key pair a new hcloud name, so create-before-delete never meets the old key's name", async () => {
    const before = await runWithKey(newKeyLine());
    const after = await runWithKey(newKeyLine());
    const [oldName, newName] = [before, after].map(({ registrations }) => one(registrations, sshKeyType).inputs.name as string);
    expect(newName).not.toBe(oldName);
    // Create-before-delete is what the engine does unless told otherwise: the names must part.
    for (const run of [before, after]) expect(run.options.get(`${sshKeyType}::management-ssh`)?.deleteBeforeReplace).toBeFalsy();
  }, 120_000);

  it("keeps the servers: their inputs do not carry the key's name, and the key's id is ignored after creation", async () => {
    const before = await runWithKey(newKeyLine());
    const after = await runWithKey(newKeyLine());
    const keyName = one(after.registrations, sshKeyType).inputs.name as string;
    for (const server of servers(after.registrations)) {
      expect(strings(server.inputs).includes(keyName), `${server.name} takes the key's name`).toBe(false);
      const ignored = after.options.get(`${serverType}::${server.name}`)?.ignoreChanges ?? [];
      // Each ignored name must be an input the server registers, or the engine has nothing to ignore.
      for (const input of ["sshKeys", "serverType"]) {
        expect(ignored).toContain(input);
        expect(Object.keys(server.inputs)).toContain(input);
      }
      const earlier = servers(before.registrations).find((candidate) => candidate.name === server.name)!;
      const kept = (inputs: Record<string, unknown>) => Object.fromEntries(Object.entries(inputs).filter(([key]) => !ignored.includes(key)));
      expect(kept(server.inputs)).toEqual(kept(earlier.inputs));
    }
  }, 120_000);
});
