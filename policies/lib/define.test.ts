import { describe, expect, it } from "vitest";
import { configDefaults, resourceRule, stackRule } from "./define";

describe("configDefaults", () => {
  it("takes the properties that have a default, and leaves out those without (the CLI fills only defaults)", () => {
    const rule = stackRule<{ limit: number; names: string[] }>({
      name: "with-config",
      description: "",
      enforcementLevel: "advisory",
      remediationSteps: "",
      config: { limit: { type: "integer", default: 2 }, names: { type: "array", items: { type: "string" }, default: [] } },
      validate: () => undefined,
    });
    const policy = { ...rule, configSchema: { properties: { ...rule.configSchema!.properties, required: { type: "string" as const } } } };
    expect(configDefaults(policy)).toStrictEqual({ limit: 2, names: [] });
  });

  it("is empty for a rule without config", () => {
    const rule = resourceRule({ name: "no-config", description: "", enforcementLevel: "mandatory", remediationSteps: "", resourceTypes: [], validate: () => undefined });
    expect(rule.configSchema).toBeUndefined();
    expect(configDefaults(rule)).toEqual({});
  });
});
