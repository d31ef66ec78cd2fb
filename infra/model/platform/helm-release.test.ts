import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { catalog } from "../versions/catalog";
import { interruptedRelease } from "./helm-history";
import { defaultReleaseTimeoutSeconds, pinnedReleaseArgs, revisionOf, type HelmStorageSecret } from "./helm-release";

describe("pinnedReleaseArgs", () => {
  it("names the release after the chart and takes a classic chart from its repository", () => {
    const pin = catalog.caren.chart;
    expect(pin.repository.startsWith("oci://")).toBe(false);
    const args = pinnedReleaseArgs(pin, "caren-system");
    expect(args).toMatchObject({ name: pin.chart, chart: pin.chart, version: pin.version, repositoryOpts: { repo: pin.repository }, namespace: "caren-system" });
  });

  it("addresses an OCI chart by its full reference, without repository options", () => {
    const pin = catalog.flux.operatorChart;
    expect(pin.repository.startsWith("oci://")).toBe(true);
    const args = pinnedReleaseArgs(pin, "flux-system");
    expect(args.chart).toBe(`${pin.repository}/${pin.chart}`);
    expect(args.name).toBe(pin.chart);
    expect(args).not.toHaveProperty("repositoryOpts");
  });

  it("waits for the workloads, creates the namespace, cleans up a failed install and bounds the history", () => {
    const args = pinnedReleaseArgs(catalog.caren.chart, "caren-system");
    expect(args).toMatchObject({ createNamespace: true, skipAwait: false, cleanupOnFail: true, maxHistory: 10, timeout: defaultReleaseTimeoutSeconds });
    expect(defaultReleaseTimeoutSeconds).toBe(600);
    expect(pinnedReleaseArgs(catalog.caren.chart, "caren-system", 42).timeout).toBe(42);
  });
});

/** A storage Secret as the API returns it: Helm's base64 of (gzipped) JSON, base64-encoded again as Secret data. */
function storageSecret(name: string, release: unknown, options: { gzip?: boolean; labels?: Record<string, string> } = {}): HelmStorageSecret {
  const json = Buffer.from(JSON.stringify(release));
  const helmEncoded = (options.gzip === false ? json : gzipSync(json)).toString("base64");
  return { metadata: { name, ...(options.labels ? { labels: options.labels } : {}) }, data: { release: Buffer.from(helmEncoded).toString("base64") } };
}

describe("revisionOf", () => {
  it("reads revision, status and chart from a gzipped record, as Helm writes it", () => {
    const secret = storageSecret("sh.helm.release.v1.caren.v3", { version: 3, info: { status: "pending-upgrade" }, chart: { metadata: { name: "caren" } } });
    expect(revisionOf(secret)).toEqual({ secret: "sh.helm.release.v1.caren.v3", revision: 3, status: "pending-upgrade", chart: "caren" });
  });

  it("reads an uncompressed record too", () => {
    const secret = storageSecret("s", { version: 2, info: { status: "deployed" }, chart: { metadata: { name: "flux-operator" } } }, { gzip: false });
    expect(revisionOf(secret)).toEqual({ secret: "s", revision: 2, status: "deployed", chart: "flux-operator" });
  });

  it("falls back on the Secret's labels for revision and status, and names no chart it cannot read", () => {
    const secret = storageSecret("s", {}, { labels: { version: "7", status: "failed" } });
    expect(revisionOf(secret)).toEqual({ secret: "s", revision: 7, status: "failed", chart: "" });
    expect(revisionOf(storageSecret("s", {}))).toEqual({ secret: "s", revision: 0, status: "unknown", chart: "" });
  });

  it("prefers the record over the labels", () => {
    const secret = storageSecret("s", { version: 4, info: { status: "superseded" }, chart: { metadata: { name: "c" } } }, { labels: { version: "9", status: "failed" } });
    expect(revisionOf(secret)).toMatchObject({ revision: 4, status: "superseded" });
  });

  it("refuses a Secret without a record", () => {
    expect(() => revisionOf({ metadata: { name: "s" } })).toThrow(/Unexpected end of JSON input/);
  });

  it("takes a record for gzip only by gzip's two-byte magic number, else reads it as JSON", () => {
    // Neither is gzip nor JSON: read as JSON, the parse refuses it (gunzip would throw a zlib error instead).
    for (const bytes of [[0x1f, 0x00, 0x7b], [0x20, 0x8b, 0x7b]]) {
      const helmEncoded = Buffer.from(bytes).toString("base64");
      const secret = { metadata: { name: "s" }, data: { release: Buffer.from(helmEncoded).toString("base64") } };
      expect(() => revisionOf(secret), JSON.stringify(bytes)).toThrow(SyntaxError);
    }
  });

  it("feeds what helm-history decides: the pending revision of an interrupted upgrade goes", () => {
    const history = [
      storageSecret("v1", { version: 1, info: { status: "superseded" }, chart: { metadata: { name: "caren" } } }),
      storageSecret("v2", { version: 2, info: { status: "deployed" }, chart: { metadata: { name: "caren" } } }),
      storageSecret("v3", { version: 3, info: { status: "pending-upgrade" }, chart: { metadata: { name: "caren" } } }),
    ].map(revisionOf);
    expect(interruptedRelease(history, "caren", "update")?.revisions).toEqual([3]);
  });
});
