import { createHash } from "node:crypto";

/**
 * The fingerprint Hetzner gives an SSH key (`hcloud ssh-key list`, the API's `fingerprint`): MD5
 * of the base64-decoded key blob, as colon-separated hex, which is OpenSSH's `ssh-keygen -l -E md5`.
 * Comments and spacing are not part of it.
 */
export function hetznerSshKeyFingerprint(publicKey: string): string {
  // Stryker disable next-line StringLiteral: equivalent, the config schema only admits lines with a blob
  const [, blob = ""] = publicKey.trim().split(/\s+/);
  const digest = createHash("md5").update(Buffer.from(blob, "base64")).digest("hex");
  return digest.replace(/(..)(?!$)/g, "$1:");
}

/** How many hex digits of the fingerprint the key's name carries (64 bits). */
const fingerprintDigits = 16;

/**
 * The management SSH key's hcloud name: `<fleet>-mgmt-<first 16 hex digits of its fingerprint>`.
 * The provider replaces the key when `public_key` changes
 * (hetznercloud/terraform-provider-hcloud@v1.63.0: internal/sshkey/resource.go, RequiresReplace),
 * and Pulumi creates the replacement before deleting the old key; Hetzner refuses a second key
 * with a name or a fingerprint already in the project (`uniqueness_error`). With the fingerprint
 * in the name, a new key pair gets a new name, while an unchanged key keeps its name. A new comment
 * on the same key pair still cannot be replaced that way: Hetzner refuses the repeated fingerprint.
 */
export function managementSshKeyName(fleetName: string, publicKey: string): string {
  return `${fleetName}-mgmt-${hetznerSshKeyFingerprint(publicKey).replaceAll(":", "").slice(0, fingerprintDigits)}`;
}
