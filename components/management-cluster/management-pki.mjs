#!/usr/bin/env node
// @ts-check
/**
 * Issues the management cluster's PKI, run by the ManagementCluster component as a
 * `command:local:Command` (once, on create; the JSON on stdout is kept in Pulumi state as
 * a secret). k3s adopts CA files placed before its first start, so Pulumi knows a working
 * admin kubeconfig without SSH into a server.
 *
 *   node scripts/management-pki.mjs authorities
 *     → {"serverCa": {certPem, keyPem}, "clientCa": {certPem, keyPem}, "k3sToken"}
 *   CLIENT_CA_CERT_PEM=… CLIENT_CA_KEY_PEM=… node scripts/management-pki.mjs admin
 *     → {"certPem", "keyPem", "notAfter"}  (client certificate in group system:masters)
 *
 * Done in a script (not @pulumi/tls and @pulumi/random) because those providers cannot be
 * built from Go module zips: their go.mod replaces a local ./shim module.
 */
// @peculiar/x509 resolves its services with tsyringe, which needs the Reflect metadata polyfill.
import "reflect-metadata";
import { KeyObject, createPrivateKey, randomBytes, webcrypto } from "node:crypto";
import { pathToFileURL } from "node:url";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto);

/** ECDSA P-256 with SHA-256: what k3s itself generates. */
const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const dayMs = 24 * 60 * 60 * 1000;

/** CAs outlive the servers; rotating one means rebuilding the cluster. */
export const caValidityDays = 3650;
/** The admin certificate is rotated with `pulumi up --replace` on its command (docs/management-cluster.md, "Kubeconfig without SSH"). */
export const adminValidityDays = 365;
export const adminSubject = "CN=capi-fleet-admin, O=system:masters";

/**
 * @typedef {{ certPem: string, keyPem: string }} KeyAndCert
 * @typedef {{ serverCa: KeyAndCert, clientCa: KeyAndCert, k3sToken: string }} Authorities
 * @typedef {KeyAndCert & { notAfter: string }} AdminCredentials
 */

/** A positive 128-bit serial (RFC 5280: at most 20 octets, never negative). */
function serialNumber() {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

function generateKeys() {
  return webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
}

/** @param {webcrypto.CryptoKey} key */
function privateKeyPem(key) {
  return /** @type {string} */ (KeyObject.from(key).export({ type: "pkcs8", format: "pem" }));
}

/**
 * @param {string} commonName
 * @param {Date} now
 * @returns {Promise<KeyAndCert>}
 */
async function selfSignedCa(commonName, now) {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${commonName}`,
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter: new Date(now.getTime() + caValidityDays * dayMs),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: privateKeyPem(keys.privateKey) };
}

/**
 * The k3s server CA (signs serving certificates), the client CA (signs client
 * certificates) and the k3s join token.
 * @param {Date} [now]
 * @returns {Promise<Authorities>}
 */
export async function issueAuthorities(now = new Date()) {
  return {
    serverCa: await selfSignedCa("capi-fleet-k3s-server-ca", now),
    clientCa: await selfSignedCa("capi-fleet-k3s-client-ca", now),
    k3sToken: randomBytes(32).toString("hex"),
  };
}

/**
 * A client certificate for the fleet's admin, signed by the client CA.
 * @param {KeyAndCert} clientCa
 * @param {Date} [now]
 * @returns {Promise<AdminCredentials>}
 */
export async function issueAdminCertificate(clientCa, now = new Date()) {
  const caCert = new x509.X509Certificate(clientCa.certPem);
  const caKeyDer = createPrivateKey(clientCa.keyPem).export({ type: "pkcs8", format: "der" });
  const caKey = await webcrypto.subtle.importKey("pkcs8", caKeyDer, algorithm, false, ["sign"]);
  const keys = await generateKeys();
  const notAfter = new Date(now.getTime() + adminValidityDays * dayMs);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: adminSubject,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter,
    signingAlgorithm: algorithm,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: privateKeyPem(keys.privateKey), notAfter: notAfter.toISOString() };
}

/**
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 */
async function main(args, env) {
  const [mode] = args;
  if (mode === "authorities") {
    return issueAuthorities();
  }
  if (mode === "admin") {
    const certPem = env.CLIENT_CA_CERT_PEM;
    const keyPem = env.CLIENT_CA_KEY_PEM;
    if (!certPem || !keyPem) {
      throw new Error("admin needs CLIENT_CA_CERT_PEM and CLIENT_CA_KEY_PEM in the environment");
    }
    return issueAdminCertificate({ certPem, keyPem });
  }
  throw new Error(`usage: management-pki.mjs authorities | admin (got ${JSON.stringify(mode ?? "")})`);
}

/** Runs `main` on this process's arguments and environment: the JSON on stdout, or the error on stderr and exit 1. */
export function runCommandLine() {
  main(process.argv.slice(2), process.env).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (/** @type {unknown} */ error) => {
      console.error(`management-pki: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  runCommandLine();
}
