import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readShippedFile } from "./shipped-file";

// A repository layout with a copy below it, as when the program runs compiled into
// node_modules/.cache: the module's directory has no shell/ of its own.
const root = mkdtempSync(path.join(tmpdir(), "shipped-file-"));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function layout(files: Record<string, string>): void {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
}

describe("readShippedFile", () => {
  it("finds the file from the module's own directory, and from a compiled copy further down", () => {
    layout({ "repo/infra/model/shell/a.sh": "own", "repo/node_modules/.cache/infra/model/.keep": "" });
    expect(readShippedFile(path.join(root, "repo"), "infra/model/shell/a.sh")).toBe("own");
    expect(readShippedFile(path.join(root, "repo/node_modules/.cache/infra/model"), "infra/model/shell/a.sh")).toBe("own");
  });

  it("takes the nearest one when a copy also has the file", () => {
    layout({ "near/shell/b.sh": "outer", "near/copy/shell/b.sh": "inner", "near/copy/deep/.keep": "" });
    expect(readShippedFile(path.join(root, "near/copy/deep"), "shell/b.sh")).toBe("inner");
  });

  it("names the missing file and where it looked, after looking up to the filesystem root", () => {
    layout({ "missing/a/b/.keep": "" });
    const from = path.join(root, "missing/a/b");
    expect(() => readShippedFile(from, "shell/not-there-3f9c.sh")).toThrow(`shell/not-there-3f9c.sh not found above ${from}`);
    // A file only at the top of the tree is still found from the bottom.
    layout({ "missing/top-only-7d1e.sh": "top" });
    expect(readShippedFile(from, "top-only-7d1e.sh")).toBe("top");
  });
});
