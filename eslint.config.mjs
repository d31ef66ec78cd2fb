// ESLint flat config: strict type-aware TypeScript rules plus Pulumi's own rules
// (no Outputs in template literals, which would render "Calling [toString] on an Output").
import js from "@eslint/js";
import pulumi from "@pulumi/eslint-plugin";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "bin/", "coverage/", ".pulumi-home/", ".pulumi-state/", ".stryker-tmp/", "reports/", "**/*.js"] },
  js.configs.recommended,
  {
    // Programs the Pulumi engine runs in tests and the bench (CommonJS, as the Node language host loads them).
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { process: "readonly", require: "readonly", console: "readonly" } },
  },
  {
    // Plain-JS scripts run by node directly; tsc type-checks them (checkJs), ESLint keeps to JS rules.
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", setTimeout: "readonly" } },
  },
  ...tseslint.configs.strictTypeChecked.map((config) => ({ ...config, files: ["**/*.ts", "**/*.mts"] })),
  {
    files: ["**/*.ts", "**/*.mts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@pulumi": pulumi },
    rules: {
      "@pulumi/no-output-in-template-literal": "error",
      "@pulumi/no-output-instance-in-template-literal": "error",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unused-vars": ["error", { varsIgnorePattern: "^_", argsIgnorePattern: "^_" }],
    },
  },
  {
    // The domain model is shared with the policy pack, which must not pull in the Pulumi runtime.
    files: ["infra/model/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["@pulumi/*"], message: "infra/model is pure: no Pulumi imports (policies/ shares it)." }] }],
    },
  },
  {
    // Test files, and the test helpers beside the code they test (infra/model/**/*-fixtures.ts).
    files: ["**/*.test.ts", "tests/**/*.ts", "policies/testing/**/*.ts", "infra/model/**/*-fixtures.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
    },
  },
);
