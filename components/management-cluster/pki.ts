import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { localCommandDir } from "../local-command-dir";
import { scriptEntryPoints } from "../../infra/model/contract/script-entry-points";

interface KeyAndCert {
  certPem: string;
  keyPem: string;
}

/** The JSON `management-pki.mjs authorities` prints. */
interface Authorities {
  serverCa: KeyAndCert;
  clientCa: KeyAndCert;
  k3sToken: string;
}

/** The JSON `management-pki.mjs admin` prints. */
interface AdminCredentials extends KeyAndCert {
  notAfter: string;
}

/** CA material handed to k3s, the join token, and the admin credentials derived from the client CA. */
export interface ManagementPki {
  readonly serverCaCertPem: pulumi.Output<string>;
  readonly serverCaKeyPem: pulumi.Output<string>;
  readonly clientCaCertPem: pulumi.Output<string>;
  readonly clientCaKeyPem: pulumi.Output<string>;
  readonly k3sToken: pulumi.Output<string>;
  readonly adminCertPem: pulumi.Output<string>;
  readonly adminKeyPem: pulumi.Output<string>;
  /** ISO date after which the admin certificate must have been rotated. */
  readonly adminCertNotAfter: pulumi.Output<string>;
}

/**
 * Issues the k3s server and client CAs, the join token and an admin client certificate
 * (`system:masters`), each once, by running components/management-cluster/management-pki.mjs where `pulumi up`
 * runs. The JSON stays in state as a secret; only stderr is logged. The admin certificate
 * is re-issued when the client CA changes, or with `pulumi up --replace` on its command.
 */
export function createManagementPki(name: string, parent: pulumi.Resource): ManagementPki {
  const authoritiesCommand = new command.local.Command(
    `${name}-pki`,
    { create: `node ${scriptEntryPoints.managementPki} authorities`, dir: localCommandDir(), logging: command.local.Logging.Stderr },
    { parent, additionalSecretOutputs: ["stdout"] },
  );
  const authorities = pulumi.secret(authoritiesCommand.stdout.apply((text) => JSON.parse(text) as Authorities));
  // Certificates are public; unsecret them so diffs and outputs stay readable.
  const serverCaCertPem = pulumi.unsecret(authorities.apply((a) => a.serverCa.certPem));
  const clientCaCertPem = pulumi.unsecret(authorities.apply((a) => a.clientCa.certPem));
  const clientCaKeyPem = authorities.apply((a) => a.clientCa.keyPem);

  const adminCommand = new command.local.Command(
    `${name}-admin-credentials`,
    {
      create: `node ${scriptEntryPoints.managementPki} admin`,
      dir: localCommandDir(),
      environment: pulumi.secret(
        pulumi.all([clientCaCertPem, clientCaKeyPem]).apply(([certPem, keyPem]) => ({
          CLIENT_CA_CERT_PEM: certPem,
          CLIENT_CA_KEY_PEM: keyPem,
        })),
      ),
      logging: command.local.Logging.Stderr,
      triggers: [clientCaCertPem],
    },
    { parent, additionalSecretOutputs: ["stdout"] },
  );
  const admin = pulumi.secret(adminCommand.stdout.apply((text) => JSON.parse(text) as AdminCredentials));

  return {
    serverCaCertPem,
    serverCaKeyPem: authorities.apply((a) => a.serverCa.keyPem),
    clientCaCertPem,
    clientCaKeyPem,
    k3sToken: authorities.apply((a) => a.k3sToken),
    adminCertPem: pulumi.unsecret(admin.apply((a) => a.certPem)),
    adminKeyPem: admin.apply((a) => a.keyPem),
    adminCertNotAfter: pulumi.unsecret(admin.apply((a) => a.notAfter)),
  };
}
