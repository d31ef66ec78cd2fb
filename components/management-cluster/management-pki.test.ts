import { execFile } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../tests/support/stack-files";

// The script is ESM (node runs it directly); this test file is CommonJS, hence the dynamic import.
let pki: typeof import("./management-pki.mjs", { with: { "resolution-mode": "import" } });
beforeAll(async () => {
  pki = await import("./management-pki.mjs");
});

const run = promisify(execFile);
const script = path.join(repoRoot, "scripts", "management-pki.mjs");
const dayMs = 24 * 60 * 60 * 1000;

describe("management PKI", () => {
  it("issues two distinct CAs whose keys match and a 64-hex-digit join token", async () => {
    const now = new Date("2026-11-29T12:00:00Z");
    const authorities = await pki.issueAuthorities(now);
    for (const ca of [authorities.serverCa, authorities.clientCa]) {
      const cert = new X509Certificate(ca.certPem);
      expect(cert.ca).toBe(true);
      expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(new Date(cert.validTo).getTime() - now.getTime()).toBeGreaterThan((pki.caValidityDays - 1) * dayMs);
    }
    expect(authorities.serverCa.certPem).not.toBe(authorities.clientCa.certPem);
    expect(authorities.k3sToken).toMatch(/^[0-9a-f]{64}$/);
    expect((await pki.issueAuthorities()).k3sToken).not.toBe(authorities.k3sToken);
  });

  it("signs an admin client certificate that only the right CA verifies", async () => {
    const { clientCa, serverCa } = await pki.issueAuthorities();
    const admin = await pki.issueAdminCertificate(clientCa);
    const cert = new X509Certificate(admin.certPem);
    expect(cert.subject.split("\n")).toEqual(["CN=capi-fleet-admin", "O=system:masters"]);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(cert.verify(new X509Certificate(clientCa.certPem).publicKey)).toBe(true);
    expect(cert.verify(new X509Certificate(serverCa.certPem).publicKey)).toBe(false);
    expect(cert.checkPrivateKey(createPrivateKey(admin.keyPem))).toBe(true);
    const lifetime = new Date(admin.notAfter).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan((pki.adminValidityDays - 1) * dayMs);
    expect(lifetime).toBeLessThanOrEqual(pki.adminValidityDays * dayMs);
  });

  it("prints JSON on stdout as the command provider expects", async () => {
    const { stdout } = await run(process.execPath, [script, "authorities"]);
    const authorities = JSON.parse(stdout) as { clientCa: { certPem: string; keyPem: string } };
    const env = { ...process.env, CLIENT_CA_CERT_PEM: authorities.clientCa.certPem, CLIENT_CA_KEY_PEM: authorities.clientCa.keyPem };
    const admin = JSON.parse((await run(process.execPath, [script, "admin"], { env })).stdout) as { certPem: string };
    expect(new X509Certificate(admin.certPem).issuer).toBe("CN=capi-fleet-k3s-client-ca");
  });

  it.each([
    [["admin"], "admin needs CLIENT_CA_CERT_PEM and CLIENT_CA_KEY_PEM"],
    [["bogus"], 'usage: management-pki.mjs authorities | admin (got "bogus")'],
  ])("fails clearly for %j", async (args, message) => {
    const env = { PATH: process.env.PATH ?? "" };
    await expect(run(process.execPath, [script, ...args], { env })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(message) });
  });
});
