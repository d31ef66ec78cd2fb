import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { fakeHcloudToken, readStackConfig } from "../../../tests/support/stack-files";
import { parseFleetConfig } from "../stack/validate-fleet-config";

// The secrets of a committed stack's validated config, the object the program passes around:
// every way it can end up as text (logs, JSON outputs, error messages) shows a marker, never a
// value; only reveal() gives the value to the composition root, which makes it a Pulumi secret.

const configOf = (stack: string) => {
  const { values, secretKeys } = readStackConfig(stack);
  return { secretKeys, config: parseFleetConfig({ stack, values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: true }) };
};

describe.each(["dev", "prod"])("the %s config's secrets", (stack) => {
  // Read inside each test, so mutation testing credits the test that catches a change.
  const read = () => {
    const { config, secretKeys } = configOf(stack);
    return { config, values: secretKeys.map(fakeHcloudToken), tenantTokens: config.tenants.map((tenant) => tenant.hcloudToken), secretKeys };
  };

  it("are the stack's values when revealed", () => {
    const { config, secretKeys, tenantTokens } = read();
    expect(secretKeys.length).toBeGreaterThan(0);
    expect(tenantTokens.map((token) => token.reveal())).toEqual(config.tenants.map((tenant) => fakeHcloudToken(`capi-fleet:tenantHcloudTokens.${tenant.name}`)));
  });

  it("never appear in JSON, inspection, string conversion or an error message built from the config", () => {
    const { config, values, tenantTokens } = read();
    const renderings = [
      JSON.stringify(config),
      inspect(config, { depth: Infinity }),
      tenantTokens.map((token) => `${String(token)} ${token.toString()}`).join(" "),
      new Error(`bad tenant ${JSON.stringify(config.tenants[0])}`).message,
    ];
    for (const text of renderings) {
      expect(values.filter((value) => text.includes(value))).toEqual([]);
    }
  });

  it("show the same visible marker in each rendering, so a reader sees a value is there", () => {
    const { tenantTokens } = read();
    const [token] = tenantTokens;
    const marker = String(token);
    expect(marker).not.toBe("");
    expect(JSON.stringify({ token })).toBe(JSON.stringify({ token: marker }));
    expect(inspect({ token })).toBe(inspect({ token: marker }).replaceAll("'", ""));
  });
});
