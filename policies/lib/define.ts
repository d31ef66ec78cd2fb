import type {
  EnforcementLevel,
  PolicyResource,
  ReportViolation,
  ResourceValidationPolicy,
  StackValidationPolicy,
} from "@pulumi/policy";
import { declaredView } from "./fleet-resources";

/**
 * Small builders so every rule file states only its name, level, config and check. Resource
 * rules match by type token (`kubernetes:cluster.x-k8s.io/v1beta2:Cluster`): custom
 * resources have no class, so `validateResourceOfType` could never match them.
 */

/** One property of a policy's config schema (the SDK does not export the type by name). */
type PolicyConfigJSONSchema = NonNullable<ResourceValidationPolicy["configSchema"]>["properties"][string];

/** What every rule declares. */
interface RuleBase<Config> {
  /** Unique kebab-case name; `pulumi preview` prints it with each violation. */
  readonly name: string;
  readonly description: string;
  readonly enforcementLevel: Exclude<EnforcementLevel, "remediate">;
  /** How to fix a violation (shown by the CLI and the table in docs/policies.md). */
  readonly remediationSteps: string;
  /** Config properties with defaults (the CLI fills defaults; tests merge them with {@link configDefaults}). */
  readonly config?: { readonly [Key in keyof Config]: PolicyConfigJSONSchema & { default: Config[Key] } };
}

/** A rule that checks one resource of one type. */
export interface ResourceRuleDefinition<Config> extends RuleBase<Config> {
  /** The type tokens the rule applies to; other resources are not its business. */
  readonly resourceTypes: readonly string[];
  /** `type` is the matched type token (one of `resourceTypes`). */
  readonly validate: (props: Record<string, unknown>, config: Config, report: ReportViolation, type: string) => void;
}

/**
 * A rule that looks at the whole stack: every resource with its dependencies, its props being
 * what the fleet's components declared for it (see `declaredView`), never its own outputs.
 */
export interface StackRuleDefinition<Config> extends RuleBase<Config> {
  readonly validate: (resources: readonly PolicyResource[], config: Config, report: ReportViolation) => void;
}

function configSchema<Config>(rule: RuleBase<Config>): Pick<ResourceValidationPolicy, "configSchema"> {
  return rule.config ? { configSchema: { properties: { ...rule.config } } } : {};
}

function policyBase<Config>(rule: RuleBase<Config>) {
  return {
    name: rule.name,
    description: rule.description,
    enforcementLevel: rule.enforcementLevel,
    remediationSteps: rule.remediationSteps,
    ...configSchema(rule),
  };
}

/** Builds a resource policy from a rule definition. */
export function resourceRule<Config extends object = Record<string, never>>(rule: ResourceRuleDefinition<Config>): ResourceValidationPolicy & { resourceTypes: readonly string[] } {
  return {
    ...policyBase(rule),
    resourceTypes: rule.resourceTypes,
    validateResource: (args, report) => {
      if (rule.resourceTypes.includes(args.type)) {
        rule.validate(args.props, args.getConfig<Config>(), report, args.type);
      }
    },
  };
}

/** Builds a stack policy from a rule definition. */
export function stackRule<Config extends object = Record<string, never>>(rule: StackRuleDefinition<Config>): StackValidationPolicy {
  return {
    ...policyBase(rule),
    validateStack: (args, report) => {
      rule.validate(declaredView(args.resources), args.getConfig<Config>(), report);
    },
  };
}

/** The defaults of a policy's config schema, as the CLI applies them before the pack runs. */
export function configDefaults(policy: ResourceValidationPolicy | StackValidationPolicy): Record<string, unknown> {
  const properties = policy.configSchema?.properties ?? {};
  return Object.fromEntries(
    Object.entries(properties)
      .filter(([, schema]) => "default" in schema)
      .map(([key, schema]) => [key, (schema as { default: unknown }).default]),
  );
}
