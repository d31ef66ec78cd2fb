// The secret config keys: read, format-checked and wrapped as SecretValue, each reported with
// the `pulumi config set --secret` line that fixes it.
import type { TenantSettings } from "./fleet-config";
import { SecretValue } from "./secret";
import { configKeys, decode, placeholderSecretPrefix, projectName, secretKeys, type ConfigProblem, type StackConfigInput } from "./stack-config";
import { closestMatch } from "./text";

/** An Object Storage access key pair (Hetzner console: Security → S3 credentials). */
export interface EtcdS3Credentials {
  readonly accessKey: SecretValue;
  readonly secretKey: SecretValue;
}

/** One set of registry credentials; the program writes it into a Secret with CAREN's keys. */
export interface RegistryCredentials {
  readonly username: SecretValue;
  readonly password: SecretValue;
  /** PEM CA certificate of a registry with a private CA. */
  readonly caCrt?: SecretValue;
}

/** Reads, format-checks and wraps secrets; records every secret key it touched. */
export class SecretReader {
  readonly placeholders: string[] = [];

  constructor(
    private readonly input: StackConfigInput,
    private readonly problems: ConfigProblem[],
  ) {}

  /** A required secret string, or undefined (with a problem) when missing or malformed. */
  read(key: string, display: string, check: (value: string) => string | undefined): SecretValue | undefined {
    const value = this.input.values[key];
    if (value === undefined || value === "") {
      this.problems.push({ path: display, message: `is required; set it with: pulumi config set --secret ${display} <value>` });
      return undefined;
    }
    return this.accept(display, value, check);
  }

  /** An optional secret string: undefined when unset, with a problem when malformed. */
  optional(key: string, display: string, check: (value: string) => string | undefined): SecretValue | undefined {
    const value = this.input.values[key];
    return value === undefined ? undefined : this.accept(display, value, check);
  }

  /** Per-tenant tokens from the secret mapping `tenantHcloudTokens`. */
  tenantTokens(tenantNames: readonly string[]): Map<string, SecretValue> {
    const tokens = new Map<string, SecretValue>();
    const raw = decode(this.input.values[configKeys.tenantHcloudTokens]);
    const mapping = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    if (raw !== undefined && mapping !== raw) {
      this.problems.push({ path: "tenantHcloudTokens", message: "expected a mapping of tenant name to token" });
    }
    for (const name of tenantNames) {
      const path = `tenantHcloudTokens.${name}`;
      const value = mapping[name];
      if (typeof value !== "string" || value === "") {
        this.problems.push({
          path,
          message: `is required: every tenant needs the token of its own Hetzner project; set it with: pulumi config set --secret --path '${path}' <token>`,
        });
        continue;
      }
      const token = this.accept(path, value, hcloudTokenProblem);
      if (token) {
        tokens.set(name, token);
      }
    }
    for (const name of Object.keys(mapping).filter((key) => !tenantNames.includes(key))) {
      const suggestion = closestMatch(name, tenantNames);
      this.problems.push({
        path: `tenantHcloudTokens.${name}`,
        message: `no tenant is named "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""}; tenants: ${tenantNames.join(", ") || "(none)"}`,
      });
    }
    return tokens;
  }

  /** The Object Storage key pair from the secret mapping `etcdS3Credentials`. */
  etcdS3Credentials(): EtcdS3Credentials | undefined {
    const raw = decode(this.input.values[configKeys.etcdS3Credentials]);
    const mapping = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    if (raw !== undefined && mapping !== raw) {
      this.problems.push({ path: "etcdS3Credentials", message: "expected a mapping with accessKey and secretKey" });
    }
    const fields = ["accessKey", "secretKey"] as const;
    for (const key of Object.keys(mapping).filter((candidate) => !(fields as readonly string[]).includes(candidate))) {
      const suggestion = closestMatch(key, fields);
      this.problems.push({
        path: `etcdS3Credentials.${key}`,
        message: `unknown key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${fields.join(", ")}`,
      });
    }
    const read = (field: (typeof fields)[number]): SecretValue | undefined => {
      const path = `etcdS3Credentials.${field}`;
      const value = mapping[field];
      if (typeof value !== "string" || value === "") {
        this.problems.push({
          path,
          message: `is required by management.backups (an Object Storage key of the Hetzner project); set it with: pulumi config set --secret --path '${path}' <value>`,
        });
        return undefined;
      }
      return this.accept(path, value, objectStorageKeyProblem);
    };
    const accessKey = read("accessKey");
    const secretKey = read("secretKey");
    return accessKey && secretKey ? { accessKey, secretKey } : undefined;
  }

  /**
   * Registry credentials from the secret mapping `tenantRegistryCredentials`: every name a
   * tenant's `imageRegistries[].credentials` or `globalImageRegistryMirror.credentials` uses
   * must be there, and nothing else.
   */
  registryCredentials(tenants: readonly TenantSettings[]): Map<string, Map<string, RegistryCredentials>> {
    const key = "tenantRegistryCredentials";
    const result = new Map<string, Map<string, RegistryCredentials>>();
    const raw = decode(this.input.values[configKeys.tenantRegistryCredentials]);
    const mappingOf = (value: unknown) =>
      typeof value === "object" &&
      // Stryker disable next-line ConditionalExpression: equivalent, null would come back as itself, and every caller treats null like undefined (?? {} and !)
      value !== null &&
      !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    const byTenant = mappingOf(raw) ?? {};
    if (raw !== undefined && !mappingOf(raw)) {
      this.problems.push({ path: key, message: "expected a mapping of tenant name to credentials name to { username, password, caCrt }" });
    }
    const tenantNames = tenants.map((tenant) => tenant.name);
    for (const name of Object.keys(byTenant).filter((candidate) => !tenantNames.includes(candidate))) {
      const suggestion = closestMatch(name, tenantNames);
      this.problems.push({ path: `${key}.${name}`, message: `no tenant is named "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ""}; tenants: ${tenantNames.join(", ") || "(none)"}` });
    }
    const fields = ["username", "password", "caCrt"] as const;
    for (const tenant of tenants) {
      const used = registryCredentialNames(tenant);
      const given = mappingOf(byTenant[tenant.name]) ?? {};
      if (byTenant[tenant.name] !== undefined && !mappingOf(byTenant[tenant.name])) {
        this.problems.push({ path: `${key}.${tenant.name}`, message: "expected a mapping of credentials name to { username, password, caCrt }" });
      }
      const credentials = new Map<string, RegistryCredentials>();
      for (const name of Object.keys(given).filter((candidate) => !used.includes(candidate))) {
        this.problems.push({
          path: `${key}.${tenant.name}.${name}`,
          message: `no registry of tenant ${tenant.name} uses it; reference it from imageRegistries[].credentials or globalImageRegistryMirror.credentials, or remove it${used.length > 0 ? ` (used: ${used.join(", ")})` : ""}`,
        });
      }
      for (const name of used) {
        const at = `${key}.${tenant.name}.${name}`;
        const entry = mappingOf(given[name]);
        if (!entry) {
          this.problems.push({
            path: at,
            message: `is required: a registry of tenant ${tenant.name} names these credentials; set them with: pulumi config set --secret --path '${at}.username' <user> and '${at}.password' <password> (optional '${at}.caCrt')`,
          });
          continue;
        }
        for (const field of Object.keys(entry).filter((candidate) => !(fields as readonly string[]).includes(candidate))) {
          const suggestion = closestMatch(field, fields);
          this.problems.push({ path: `${at}.${field}`, message: `unknown key${suggestion ? `; did you mean "${suggestion}"?` : ""}; allowed keys: ${fields.join(", ")}` });
        }
        const read = (field: (typeof fields)[number], required: boolean): SecretValue | undefined => {
          const value = entry[field];
          if (value === undefined && !required) return undefined;
          if (typeof value !== "string" || value === "") {
            this.problems.push({ path: `${at}.${field}`, message: `is required; set it with: pulumi config set --secret --path '${at}.${field}' <value>` });
            return undefined;
          }
          return this.accept(`${at}.${field}`, value, field === "caCrt" ? pemCertificateProblem : () => undefined);
        };
        const username = read("username", true);
        const password = read("password", true);
        const caCrt = read("caCrt", false);
        if (username && password) credentials.set(name, { username, password, ...(caCrt ? { caCrt } : {}) });
      }
      result.set(tenant.name, credentials);
    }
    return result;
  }

  /** Every secret key present must have been stored with --secret. */
  checkStoredAsSecrets(): void {
    for (const key of secretKeys) {
      if (this.input.values[key] !== undefined && !this.input.secretKeys.has(key)) {
        const display = key.startsWith(`${projectName}:`) ? key.slice(projectName.length + 1) : key;
        this.problems.push({
          path: display,
          message: `is stored in plain text; remove it and set it again with: pulumi config set --secret ${display} <value> (and rotate it: it was committed unencrypted)`,
        });
      }
    }
  }

  /** A secret that the chosen mode does not use is a mistake worth reporting, not ignoring. */
  rejectUnused(key: string, display: string, usedBy: string): void {
    if (this.input.values[key] !== undefined) {
      this.problems.push({ path: display, message: `is only used with ${usedBy}; remove it: pulumi config rm ${display}` });
    }
  }

  private accept(display: string, value: string, check: (value: string) => string | undefined): SecretValue | undefined {
    if (value.toLowerCase().startsWith(placeholderSecretPrefix)) {
      if (!this.input.allowPlaceholderSecrets) {
        this.problems.push({
          path: display,
          message: `still holds the committed placeholder; set the real value before pulumi up: pulumi config set --secret ${display.includes(".") ? `--path '${display}'` : display} <value>`,
        });
        return undefined;
      }
      this.placeholders.push(display);
      return new SecretValue(value);
    }
    const problem = check(value);
    if (problem) {
      this.problems.push({ path: display, message: problem });
      return undefined;
    }
    return new SecretValue(value);
  }
}

/** Names of the registry credentials the tenant references, each once. */
export function registryCredentialNames(tenant: Pick<TenantSettings, "imageRegistries" | "globalImageRegistryMirror">): string[] {
  const names = [...(tenant.imageRegistries ?? []).map((registry) => registry.credentials), tenant.globalImageRegistryMirror?.credentials];
  return [...new Set(names.filter((name): name is string => name !== undefined))];
}

/** S3 keys are printable ASCII without spaces; Hetzner's are 20 and 40 characters. */
export function objectStorageKeyProblem(key: string): string | undefined {
  return /^[\x21-\x7e]{16,128}$/.test(key)
    ? undefined
    : `is not an Object Storage key (expected 16 to 128 printable characters without spaces, got ${key.length} characters)`;
}

/** A PEM certificate (what containerd and the kubelet credential provider read as `ca.crt`), LF or CRLF lines as Go's PEM decoder takes them. */
export function pemCertificateProblem(text: string): string | undefined {
  return /^-----BEGIN CERTIFICATE-----\r?\n[\s\S]+\n-----END CERTIFICATE-----$/.test(text.trim())
    ? undefined
    : "is not a PEM certificate (expected -----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)";
}

/** hcloud API tokens are 64 alphanumeric characters. */
export function hcloudTokenProblem(token: string): string | undefined {
  return /^[A-Za-z0-9]{64}$/.test(token)
    ? undefined
    : `is not an hcloud API token (expected 64 letters and digits, got ${token.length} characters)`;
}

/**
 * GitHub tokens as GitHub issues them: `ghp_` (classic), `github_pat_` (fine-grained), `ghs_`
 * / `ghu_` / `gho_` (app and OAuth tokens, e.g. a workflow's GITHUB_TOKEN) or 40 hex digits
 * (older classic tokens). Reading public releases needs no scope; cluster-api-operator's
 * docs/README.md asks for `repo`, as clusterctl's do.
 */
export function githubTokenProblem(token: string): string | undefined {
  return /^(gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244}|[0-9a-f]{40})$/.test(token)
    ? undefined
    : `is not a GitHub token (expected ghp_…, github_pat_…, ghs_… or 40 hex digits, got ${token.length} characters)`;
}
