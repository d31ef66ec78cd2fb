import * as pulumi from "@pulumi/pulumi";
import * as tls from "@pulumi/tls";

/** Ten years: the CAs outlive any server; rotating them means a new cluster. */
const caValidityHours = 10 * 365 * 24;
/** One year for the admin client certificate; renewed by `pulumi up` in its last 30 days. */
const adminCertValidityHours = 365 * 24;
const adminCertEarlyRenewalHours = 30 * 24;

/** The admin identity: k3s grants system:masters full access. */
export const adminSubject = { commonName: "capi-fleet-admin", organizations: ["system:masters"] };

/** CA material handed to k3s and the admin credentials derived from it. */
export interface ManagementPki {
  readonly serverCaCertPem: pulumi.Output<string>;
  readonly serverCaKeyPem: pulumi.Output<string>;
  readonly clientCaCertPem: pulumi.Output<string>;
  readonly clientCaKeyPem: pulumi.Output<string>;
  readonly adminCertPem: pulumi.Output<string>;
  readonly adminKeyPem: pulumi.Output<string>;
}

function selfSignedCa(name: string, commonName: string, parent: pulumi.Resource) {
  const key = new tls.PrivateKey(`${name}-key`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, { parent });
  const cert = new tls.SelfSignedCert(
    `${name}-cert`,
    {
      privateKeyPem: key.privateKeyPem,
      subject: { commonName },
      isCaCertificate: true,
      validityPeriodHours: caValidityHours,
      allowedUses: ["cert_signing", "crl_signing", "digital_signature", "key_encipherment"],
    },
    { parent },
  );
  return { key, cert };
}

/**
 * Issues the k3s server CA, the client CA and an admin client certificate. k3s adopts
 * CA files placed before its first start, so the program knows a working kubeconfig
 * without SSH-ing into a server.
 */
export function createManagementPki(name: string, parent: pulumi.Resource): ManagementPki {
  const serverCa = selfSignedCa(`${name}-server-ca`, "k3s-server-ca", parent);
  const clientCa = selfSignedCa(`${name}-client-ca`, "k3s-client-ca", parent);
  const adminKey = new tls.PrivateKey(`${name}-admin-key`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, { parent });
  const adminRequest = new tls.CertRequest(`${name}-admin-csr`, { privateKeyPem: adminKey.privateKeyPem, subject: adminSubject }, { parent });
  const adminCert = new tls.LocallySignedCert(
    `${name}-admin-cert`,
    {
      certRequestPem: adminRequest.certRequestPem,
      caPrivateKeyPem: clientCa.key.privateKeyPem,
      caCertPem: clientCa.cert.certPem,
      validityPeriodHours: adminCertValidityHours,
      earlyRenewalHours: adminCertEarlyRenewalHours,
      allowedUses: ["client_auth", "digital_signature", "key_encipherment"],
    },
    { parent },
  );
  return {
    serverCaCertPem: serverCa.cert.certPem,
    serverCaKeyPem: pulumi.secret(serverCa.key.privateKeyPem),
    clientCaCertPem: clientCa.cert.certPem,
    clientCaKeyPem: pulumi.secret(clientCa.key.privateKeyPem),
    adminCertPem: adminCert.certPem,
    adminKeyPem: pulumi.secret(adminKey.privateKeyPem),
  };
}
