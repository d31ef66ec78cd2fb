import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

/**
 * Scratch directories under the system's temporary directory, removed after the calling test
 * file's tests (CI shares the machine's disk). Call it at the top level of a test file.
 */
export function scratchDirectories(): (prefix: string) => string {
  const created: string[] = [];
  afterAll(() => {
    for (const dir of created) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    created.push(dir);
    return dir;
  };
}
