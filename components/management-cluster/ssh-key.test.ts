import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sshKeyTypes } from "../../infra/model/config/fleet-config";
import { one, runStack } from "../../tests/support/fleet-run";
import type { Registration } from "../../tests/support/pulumi-mocks";
import { hetznerSshKeyFingerprint, managementSshKeyName } from "./ssh-key";

// Rotating management.sshPublicKey. The provider replaces hcloud_ssh_key when public_key changes
// (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/sshkey/resource.go, RequiresReplace),
// and Pulumi creates the replacement before deleting the old key; Hetzner refuses a second key
// with a name or a fingerprint already in the project ("uniqueness_error"), so a new key pair must
// get a new name.

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

describe("the key's name", () => {
  it("carries the fingerprint Hetzner lists, which is OpenSSH's MD5 fingerprint of the key, for every key type the config takes", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "capi-fleet-ssh-key-"));
    try {
      const generated = [["ed25519"], ["ecdsa", "256"], ["ecdsa", "384"], ["ecdsa", "521"], ["rsa", "2048"]].map(([type, bits], index) => {
        const file = path.join(dir, `key-${index}`);
        const made = spawnSync("ssh-keygen", ["-q", "-t", type!, ...(bits ? ["-b", bits] : []), "-N", "", "-C", "ops@example", "-f", file], { encoding: "utf8" });
        if (made.error || made.status !== 0) throw new Error(`ssh-keygen (OpenSSH) is needed to check the fingerprint: ${made.error?.message ?? made.stderr}`);
        const line = readFileSync(`${file}.pub`, "utf8");
        // openssh-portable: ssh-keygen.c, `-E md5` prints "MD5:" and sshkey_fingerprint's colon hex of the key blob.
        const printed = spawnSync("ssh-keygen", ["-l", "-E", "md5", "-f", `${file}.pub`], { encoding: "utf8" }).stdout;
        return { line, openssh: /MD5:([0-9a-f:]+)/.exec(printed)?.[1] };
      });
      expect(new Set(generated.map(({ line }) => line.split(" ")[0]))).toEqual(new Set(sshKeyTypes));
      for (const { line, openssh } of generated) {
        expect(openssh).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
        expect(hetznerSshKeyFingerprint(line)).toBe(openssh);
        expect(managementSshKeyName("capi-fleet-prod", line)).toBe(`capi-fleet-prod-mgmt-${openssh!.replaceAll(":", "").slice(0, 16)}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("differs for any two key pairs, so a rotation's new key never takes the old key's name", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
        fc.pre(Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0);
        expect(managementSshKeyName("f", ed25519Line(a))).not.toBe(managementSshKeyName("f", ed25519Line(b)));
      }),
    );
  });

  it("stays the same for the same key pair: another comment or spacing renames nothing", () => {
    const line = newKeyLine("old comment");
    const [type, blob] = line.split(" ");
    for (const variant of [`${type} ${blob} new comment`, `  ${type}\t${blob}\n`]) {
      expect(managementSshKeyName("f", variant)).toBe(managementSshKeyName("f", line));
    }
  });
});
