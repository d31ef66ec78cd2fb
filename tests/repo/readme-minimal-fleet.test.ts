import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { stackConfigFromFile } from "../../infra/model/config/stack-file";
import { FleetConfigError } from "../../infra/model/config/stack-config";
import { parseFleetConfig } from "../../infra/model/stack/validate-fleet-config";
import { repoRoot } from "../support/stack-files";

// The README's "A minimal fleet" must be a stack file the program accepts: it goes through the
// same path as `npm run plan` (scripts/plan.ts): stackConfigFromFile, then parseFleetConfig.

const heading = "## A minimal fleet";

/** The first ```yaml block after the heading, or undefined when there is none. */
export function minimalFleetBlock(readme: string): string | undefined {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) return undefined;
  const rest = readme.slice(start + heading.length + 2);
  const nextHeading = rest.search(/^## /m);
  const section = nextHeading < 0 ? rest : rest.slice(0, nextHeading);
  return /^```yaml\n([\s\S]*?)^```$/m.exec(section)?.[1];
}

/** Runs a stack file's text through the program's validation, as `npm run plan` does. */
function validate(text: string) {
  return parseFleetConfig(stackConfigFromFile("readme", parse(text)));
}

/** The validation's error message for a stack file it refuses (fails the test when it accepts it). */
function refusal(text: string): string {
  try {
    validate(text);
  } catch (error) {
    expect(error).toBeInstanceOf(FleetConfigError);
    return (error as Error).message;
  }
  throw new Error("the validation accepted the stack file");
}

const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
const block = minimalFleetBlock(readme);

describe("the README's minimal fleet", () => {
  it("is a yaml block right under its heading", () => {
    expect(block, `a \`\`\`yaml block under "${heading}"`).toBeDefined();
    expect(block!.split("\n").length).toBeLessThanOrEqual(30);
  });

  it("passes the program's config validation (the path of npm run plan)", () => {
    const config = validate(block!);
    expect(config.management.mode).toBe("hetzner");
    expect(config.tenants.map((tenant) => tenant.name)).toEqual(["team-a"]);
  });

  it("shows its secrets as secure: values, which the validation counts as set with --secret", () => {
    const input = stackConfigFromFile("readme", parse(block!));
    expect([...input.secretKeys].sort()).toEqual(["capi-fleet:tenantHcloudTokens", "hcloud:token"]);
  });

  it("negative control: without a required key it is refused, naming the key", () => {
    const withoutVersion = block!.replace(/^\s*kubernetesVersion: .*\n/m, "");
    expect(withoutVersion).not.toBe(block);
    expect(refusal(withoutVersion)).toContain("tenants[0].kubernetesVersion");
  });

  it("negative control: a misspelt key is refused, naming it and the key meant", () => {
    const misspelt = block!.replace("serverType:", "serverTyp:");
    expect(misspelt).not.toBe(block);
    const message = refusal(misspelt);
    expect(message).toContain("management.serverTyp");
    expect(message).toContain('"serverType"');
  });

  it("negative control: a secret written in plain text is refused", () => {
    const plain = block!.replace(/hcloud:token:\n\s*secure: .*/, "hcloud:token: not-a-secret");
    expect(plain).not.toBe(block);
    expect(refusal(plain)).toContain("hcloud:token");
  });

  it("negative control: the extraction finds nothing without the heading", () => {
    expect(minimalFleetBlock(readme.replace(heading, "## Some fleet"))).toBeUndefined();
  });
});
