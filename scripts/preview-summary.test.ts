import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../tests/support/stack-files";

// scripts/preview-summary.mjs beyond what the real engine shows it (tests/in-the-loop/policy-pack-real-engine.test.ts
// feeds it the engine's event logs of fresh, failing and sharded previews): what it does with a stack
// that has no report, and with text that would otherwise become HTML or split a table cell.

interface StackReport {
  stack: string;
  command: string;
  exitCode: number;
  changes?: Record<string, number>;
  policyPacks?: Record<string, string>;
  violations: { policy: string; level: string; resource: string; message: string }[];
  errors: string[];
}

const script = path.join(repoRoot, "scripts", "preview-summary.mjs");
const scratch = mkdtempSync(path.join(tmpdir(), "preview-summary-"));
interface CostRow {
  now: string;
  after: string;
  change: string;
}
interface FleetCostReport {
  currency: string;
  refreshed: boolean;
  fleet: CostRow;
  movers: (CostRow & { tenant: string; stack: string })[];
  stacks: (CostRow & { stack: string; nowUnknown?: string; unpriced: string[] })[];
  unpricedStacks: { stack: string; problems: { path: string; message: string }[] }[];
  notKnownInAdvance: string[];
}
let formatComment: (stacks: string[], reports: Map<string, StackReport>, costs?: FleetCostReport) => string;
let readEventLog: (log: string) => Pick<StackReport, "changes" | "violations" | "errors">;

beforeAll(async () => {
  ({ formatComment, readEventLog } = (await import("./preview-summary.mjs")) as { formatComment: typeof formatComment; readEventLog: typeof readEventLog });
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const passed: StackReport = { stack: "prod", command: "preview", exitCode: 0, changes: { create: 2, update: 1, same: 40 }, violations: [], errors: [] };

describe("the PR comment", () => {
  it("lists a stack without a report as failed, so a preview job that died early is not read as a pass", () => {
    const comment = formatComment(["prod", "prod-shard-a"], new Map([["prod", passed]]));
    expect(comment.split("\n")[0]).toBe("<!-- capi-fleet: stack previews -->");
    expect(comment).toContain("### Pulumi preview of 2 stacks: 1 failed");
    expect(comment).toContain("| prod | ✅ passed | 2 | 1 | 0 | 0 | none |");
    expect(comment).toContain("| prod-shard-a | ⚠️ no report: the preview job stopped before the preview (see its log) |");
  });

  it("escapes what a message could turn into HTML or a new table cell", () => {
    const report: StackReport = {
      ...passed,
      exitCode: 255,
      violations: [{ policy: "tenant-upgrade-path", level: "mandatory", resource: "cluster.x-k8s.io/v1beta2:Cluster::a|b", message: "<img src=x> v1.33 -> v1.35\nskips a minor" }],
      errors: ["<b>preview failed</b>"],
    };
    const comment = formatComment(["prod"], new Map([["prod", report]]));
    expect(comment).toContain("| prod | ❌ failed | 2 | 1 | 0 | 0 | 1 mandatory |");
    expect(comment).toContain("- **mandatory** `tenant-upgrade-path` on `cluster.x-k8s.io/v1beta2:Cluster::a\\|b`: &lt;img src=x&gt; v1.33 -&gt; v1.35 skips a minor");
    expect(comment).toContain("- error: &lt;b&gt;preview failed&lt;/b&gt;");
    expect(comment).not.toContain("<img");
  });

  it("reads the engine's events: the summary's counts, policy events (markup removed, stack-wide ones without a resource), errors but not ephemeral ones", () => {
    const log = [
      { diagnosticEvent: { severity: "error", message: "gone", ephemeral: true } },
      { diagnosticEvent: { severity: "error", prefix: "error: ", message: "<{%fg 1%}>preview failed<{%reset%}>" } },
      { diagnosticEvent: { severity: "warning", message: "a warning" } },
      { policyEvent: { resourceUrn: "urn:pulumi:prod::capi-fleet::pulumi:pulumi:Stack::capi-fleet-prod", message: "stack-wide", policyName: "fleet-version-drift", enforcementLevel: "advisory" } },
      { policyEvent: { resourceUrn: "urn:pulumi:prod::capi-fleet::capi-fleet:tenants:TenantCluster$kubernetes:cluster.x-k8s.io/v1beta2:Cluster::payments", message: "\u001b[31mskips\u001b[0m", policyName: "tenant-upgrade-path", enforcementLevel: "mandatory" } },
      { summaryEvent: { resourceChanges: { same: 3, update: 1 }, durationSeconds: 4, PolicyPacks: { "capi-fleet|local|/pack": "0.1.0" } } },
    ]
      .map((event) => JSON.stringify(event))
      .join("\n");
    expect(readEventLog(log)).toEqual({
      changes: { same: 3, update: 1 },
      policyPacks: { "capi-fleet|local|/pack": "0.1.0" },
      violations: [
        { policy: "fleet-version-drift", level: "advisory", resource: "", message: "stack-wide" },
        { policy: "tenant-upgrade-path", level: "mandatory", resource: "kubernetes:cluster.x-k8s.io/v1beta2:Cluster::payments", message: "skips" },
      ],
      errors: ["error: preview failed"],
    });
  });
});

describe("the PR comment's cost section (from npm run plan -- --cost-report)", () => {
  const costs: FleetCostReport = {
    currency: "EUR",
    refreshed: true,
    fleet: { now: "190.50–240.50", after: "202.50–263.00", change: "+12.00–+22.50" },
    movers: [{ tenant: "dev-b", stack: "dev", now: "—", after: "12.00–22.50", change: "+12.00–+22.50" }],
    stacks: [
      { stack: "dev", now: "22.50", after: "34.50–45.00", change: "+12.00–+22.50", unpriced: [] },
      { stack: "prod-shard-a", now: "?", after: "100.00", change: "?", nowUnknown: "the stack file is new since abc123", unpriced: [] },
    ],
    unpricedStacks: [{ stack: "prod", problems: [{ path: "tenants[1].workers[0].machineType", message: '"cx99" has no price in the price table' }] }],
    notKnownInAdvance: ["load balancers of LoadBalancer Services"],
  };

  it("shows the fleet's change, the largest movers, each stack, and what could not be priced or known", () => {
    const comment = formatComment(["prod"], new Map([["prod", passed]]), costs);
    expect(comment).toContain("#### Monthly cost (EUR, net of VAT; autoscaled pools as min–max)");
    expect(comment).toContain("All stacks: 190.50–240.50 now, 202.50–263.00 after: **+12.00–+22.50**");
    expect(comment).toContain("| dev-b | dev | — | 12.00–22.50 | **+12.00–+22.50** |");
    expect(comment).toContain("| prod-shard-a | ? | 100.00 | ? | now unknown: the stack file is new since abc123");
    expect(comment).toContain('⚠️ prod cannot be priced: `tenants[1].workers[0].machineType`: "cx99" has no price in the price table');
    expect(comment).toContain("Not known in advance, not included: load balancers of LoadBalancer Services.");
  });

  it("says when no tenant's cost changes, and when the price table was never refreshed", () => {
    expect(formatComment(["prod"], new Map([["prod", passed]]), { ...costs, movers: [] })).toContain("No tenant's cost changes.");
    const unrefreshed = formatComment(["prod"], new Map([["prod", passed]]), { ...costs, refreshed: false });
    expect(unrefreshed).toContain("The price table holds no prices yet: refresh it with `HCLOUD_TOKEN=… npm run prices -- --refresh`");
    expect(unrefreshed).not.toContain("All stacks:");
  });
});

describe("scripts/preview-summary.mjs", () => {
  it("report: without an event log (the CLI stopped before the engine), a report that says so", () => {
    const result = spawnSync(process.execPath, [script, "report", "--stack", "prod", "--command", "preview", "--exit-code", "255", "--events", path.join(scratch, "missing.jsonl")], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ stack: "prod", command: "preview", exitCode: 255, policyPacks: {}, violations: [], errors: [`no event log at ${path.join(scratch, "missing.jsonl")}: the command stopped before the engine ran`] });
  });

  it("comment: every stack of the repository's stack files, from the reports downloaded (one directory per artifact)", () => {
    const reports = path.join(scratch, "reports");
    mkdirSync(path.join(reports, "preview-report-prod"), { recursive: true });
    writeFileSync(path.join(reports, "preview-report-prod", "prod.json"), JSON.stringify(passed));
    const result = spawnSync(process.execPath, [script, "comment", "--reports", reports], { encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("| dev | ⚠️ no report");
    expect(result.stdout).toContain("| prod | ✅ passed | 2 | 1 | 0 | 0 | none |");
    expect(result.stdout).not.toContain("Monthly cost");
    const costs = path.join(scratch, "costs.json");
    writeFileSync(costs, JSON.stringify({ currency: "EUR", refreshed: false }));
    const withCosts = spawnSync(process.execPath, [script, "comment", "--reports", reports, "--costs", costs], { encoding: "utf8" });
    expect(withCosts.stdout).toContain("The price table holds no prices yet");
  });

  it("bad usage: exit 2 with the usage", () => {
    const result = spawnSync(process.execPath, [script, "report", "--stack", "prod"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("preview-summary: missing --command, --exit-code, --events");
    expect(spawnSync(process.execPath, [script, "publish"], { encoding: "utf8" }).stderr).toContain("unknown command publish");
  });
});
