import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { readStackConfig } from "../../../tests/support/stack-files";
import { FleetConfigError, type StackConfigInput } from "./stack-config";
import { githubTokenProblem } from "./secret-reader";
import { parseFleetConfig, type FleetConfig } from "../stack/validate-fleet-config";

// The optional `githubToken` secret: validated like the other secrets, before anything is registered.

const classicToken = `ghp_${"A1b2C3d4E5".repeat(3)}f6G7h8`;

/** The dev stack's config, with `capi-fleet:githubToken` set (as a secret unless `plain`). */
function devWith(token: string | undefined, options: { plain?: boolean; key?: string; allowPlaceholderSecrets?: boolean } = {}): StackConfigInput {
  const { values, secretKeys } = readStackConfig("dev");
  const key = options.key ?? "capi-fleet:githubToken";
  if (token !== undefined) {
    values[key] = token;
    if (!options.plain) secretKeys.push(key);
  }
  return { stack: "dev", values, secretKeys: new Set(secretKeys), allowPlaceholderSecrets: options.allowPlaceholderSecrets ?? true };
}

function parse(input: StackConfigInput): FleetConfig | FleetConfigError {
  try {
    return parseFleetConfig(input);
  } catch (error) {
    if (error instanceof FleetConfigError) return error;
    throw error;
  }
}

const problems = (result: FleetConfig | FleetConfigError) => (result instanceof FleetConfigError ? result.problems : []);

describe("githubToken", () => {
  it("is optional", () => {
    const config = parse(devWith(undefined));
    expect(config).not.toBeInstanceOf(FleetConfigError);
    expect((config as FleetConfig).githubToken).toBeUndefined();
  });

  it("is read as a secret value that never prints", () => {
    const config = parse(devWith(classicToken)) as FleetConfig;
    expect(config.githubToken?.reveal()).toBe(classicToken);
    expect(inspect(config)).not.toContain(classicToken);
    expect(JSON.stringify(config)).not.toContain(classicToken);
  });

  it.each([
    ["classic", classicToken],
    ["fine-grained", `github_pat_${"a1B2c3D4e5".repeat(8)}_x`],
    ["workflow (app installation)", `ghs_${"Z9y8X7w6V5".repeat(3)}u4T3s2`],
    ["older classic, 40 hex digits", "0123456789abcdef0123456789abcdef01234567"],
  ])("accepts a %s token", (_kind, token) => {
    expect(githubTokenProblem(token)).toBeUndefined();
  });

  it("is refused together with a providers mirror (the operator would still check it against GitHub), and accepted with a charts mirror only", () => {
    const withMirrors = (mirrors: Record<string, string>) => {
      const input = devWith(classicToken);
      return { ...input, values: { ...input.values, "capi-fleet:mirrors": JSON.stringify(mirrors) } };
    };
    expect(problems(parse(withMirrors({ providers: "registry.example.com/capi-providers" })))).toContainEqual({
      path: "githubToken",
      message: expect.stringContaining("is set together with mirrors.providers"),
    });
    expect(problems(parse(withMirrors({ charts: "https://charts.example.com" })))).toEqual([]);
  });

  it("refuses plain text, naming the key and how to set it", () => {
    expect(problems(parse(devWith(classicToken, { plain: true })))).toContainEqual({
      path: "githubToken",
      message: expect.stringContaining("is stored in plain text; remove it and set it again with: pulumi config set --secret githubToken"),
    });
  });

  it("refuses a token with text pasted before or after it", () => {
    // GitHub's format (github.blog changelog 2021-03-31, "Authentication token format updates"): the
    // token is its prefix (ghp_, gho_, ghu_, ghs_, ghr_) and what follows; nothing comes before or after.
    for (const value of [`token ${classicToken}`, `${classicToken} `, `Bearer ${classicToken}`, `${classicToken}#`]) {
      expect(problems(parse(devWith(value))).map((problem) => problem.path), value).toEqual(["githubToken"]);
    }
  });

  it("refuses what is not a GitHub token, without echoing it", () => {
    const found = problems(parse(devWith("hunter2-not-a-token")));
    expect(found).toEqual([{ path: "githubToken", message: expect.stringContaining("is not a GitHub token") }]);
    expect(JSON.stringify(found)).not.toContain("hunter2");
  });

  it("accepts the committed placeholder in previews and refuses it for up", () => {
    const preview = parse(devWith("placeholder-github-token")) as FleetConfig;
    expect(preview.placeholderSecrets).toContain("githubToken");
    expect(problems(parse(devWith("placeholder-github-token", { allowPlaceholderSecrets: false })))).toContainEqual({
      path: "githubToken",
      message: expect.stringContaining("still holds the committed placeholder"),
    });
  });

  it("suggests the key for a misspelling (negative control: an unknown key is not silently ignored)", () => {
    expect(problems(parse(devWith(classicToken, { key: "capi-fleet:githubTokn" })))).toContainEqual({
      path: "githubTokn",
      message: expect.stringContaining('did you mean "githubToken"?'),
    });
  });
});
