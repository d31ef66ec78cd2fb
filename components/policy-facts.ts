import * as pulumi from "@pulumi/pulumi";
import { type DeclaredResource } from "../infra/model/contract/policy-facts";
import { componentOutputs } from "../infra/model/contract/outputs";

/**
 * Collects what a component declared for the children the policy pack's stack rules read, and
 * turns it into the component's `declared` output (infra/model/contract/policy-facts.ts says why the
 * rules cannot read those children's own outputs). Only plain, secret-free inputs go in.
 */
export class DeclaredFacts {
  private readonly entries: pulumi.Output<DeclaredResource>[] = [];

  /** Records `props` as what `resource` was declared with; returns the resource. */
  add<R extends pulumi.Resource>(resource: R, props: object): R {
    this.entries.push(resource.urn.apply((urn) => ({ urn, props: props as Readonly<Record<string, unknown>> })));
    return resource;
  }

  /** Every declared child so far (the management stack also exports them for its shard stacks). */
  all(): pulumi.Output<DeclaredResource[]> {
    return pulumi.all(this.entries);
  }

  /** The outputs to register: `{ declared: [...] }`. */
  outputs(): Record<string, pulumi.Output<DeclaredResource[]>> {
    return { [componentOutputs.declared]: this.all() };
  }
}
