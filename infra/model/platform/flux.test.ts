import { describe, expect, it } from "vitest";
import { fleetRepositoryName, kustomizationSpec } from "./flux";

/** A Flux duration of whole minutes, in minutes. */
const minutes = (duration: unknown) => Number(/^(\d+)m$/.exec(String(duration))?.[1]);

describe("a fleet Kustomization", () => {
  // Computed in each test, not while the file loads: StrykerJS activates a mutant per test.
  const spec = () => kustomizationSpec("./clusters/prod/tenants");

  it("applies its path from the fleet repository and prunes what leaves Git", () => {
    expect(spec()).toMatchObject({ path: "./clusters/prod/tenants", sourceRef: { kind: "GitRepository", name: fleetRepositoryName }, prune: true });
  });

  it("retries a failure before its next interval and gives up on an apply within one", () => {
    const { interval, retryInterval, timeout } = spec();
    expect(minutes(retryInterval)).toBeGreaterThan(0);
    expect(minutes(retryInterval)).toBeLessThan(minutes(interval));
    expect(minutes(timeout)).toBeGreaterThan(0);
    expect(minutes(timeout)).toBeLessThan(minutes(interval));
  });
});
