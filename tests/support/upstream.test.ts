import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { catalog } from "../../infra/model/versions/catalog";
import { downloadModule, isRefusal, upstreamDir } from "./upstream";

// The resolver against the real Go module proxy and go command (tests/support/upstream.ts).

const scratch = mkdtempSync(path.join(tmpdir(), "upstream-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
const k3s = { module: "github.com/k3s-io/k3s", version: catalog.k3s.version };

describe("the resolver", () => {
  it("downloads a module whose go.mod needs a newer Go than the machine's (the Flux Operator)", () => {
    const answer = downloadModule("github.com/controlplaneio-fluxcd/flux-operator", `v${catalog.flux.operatorChart.version.replace(/^v/, "")}`);
    expect(answer).toHaveProperty("dir");
  }, 10 * 60_000);

  it("reports the proxy's refusal with its answer, and reads a data copy only for a refused module", () => {
    const answer = downloadModule(k3s.module, k3s.version);
    expect("refused" in answer && answer.refused).toMatch(/403 Forbidden|not available/);
    const copies = path.join(scratch, "copies");
    mkdirSync(path.join(copies, "k3s-copy"), { recursive: true });
    const env = { ...process.env, CAPI_FLEET_SHARED_UPSTREAM: copies };
    expect(upstreamDir({ ...k3s, path: "pkg/cli/cmds", shared: "k3s-copy" }, env)).toMatchObject({ dir: path.join(copies, "k3s-copy"), dataCopy: true });
    // Negative control: without the copy, unavailable, naming where it looked.
    expect(upstreamDir({ ...k3s, path: "pkg/cli/cmds", shared: "no-such-copy" }, env)).toEqual({
      unavailable: expect.stringContaining(path.join(copies, "no-such-copy")) as string,
    });
    // A module the proxy serves never comes from a copy, even where one exists.
    expect(upstreamDir({ module: "sigs.k8s.io/cluster-api", version: catalog.clusterApi.version, path: "config/crd/bases", shared: "k3s-copy" }, env)).toMatchObject({ dataCopy: false });
  }, 10 * 60_000);

  it("fails loudly, never 'unavailable', when the proxy cannot be asked", () => {
    const offline = { ...process.env, GOPROXY: "off", GOMODCACHE: path.join(scratch, "gomod"), GOFLAGS: "" };
    expect(() => downloadModule("github.com/robfig/cron/v3", "v3.0.0", offline)).toThrow(/not by a refusal of the proxy .*GOPROXY=off/s);
    expect(isRefusal("module lookup disabled by GOPROXY=off")).toBe(false);
    expect(isRefusal("reading https://proxy.golang.org/x/@v/v1.1.8.info: 403 Forbidden")).toBe(true);
  });
});
