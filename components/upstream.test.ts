import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { installRecordingMocks } from "../tests/support/pulumi-mocks";
import { upstreamOf } from "./upstream";

describe("upstreamOf", () => {
  let resource: pulumi.Resource;

  beforeAll(async () => {
    await installRecordingMocks("capi-fleet", "dev");
    resource = new pulumi.ComponentResource("test:index:Thing", "thing");
  });

  it("passes plain resources on", () => {
    expect(upstreamOf(undefined)).toEqual([]);
    expect(upstreamOf({ dependsOn: resource })).toEqual([resource]);
    expect(upstreamOf({ dependsOn: [resource] })).toEqual([resource]);
  });

  it("refuses an Output, which would hide the ordering (negative control)", () => {
    expect(() => upstreamOf({ dependsOn: pulumi.output([resource]) })).toThrow(/not as an Output/);
  });
});
