import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Reads a file committed with the program (a shell script the servers run), given its path
 * from the repository root. Looks upwards from `fromDirectory`, because the program also
 * runs compiled into node_modules/.cache (`npm run plan`, `npm run bench`), where the
 * compiled module sits below a copy of the repository's layout that has no such file.
 */
export function readShippedFile(fromDirectory: string, pathFromRepoRoot: string): string {
  for (let directory = fromDirectory; ; directory = path.dirname(directory)) {
    const candidate = path.join(directory, pathFromRepoRoot);
    if (existsSync(candidate)) {
      return readFileSync(candidate, "utf8");
    }
    if (path.dirname(directory) === directory) {
      throw new Error(`${pathFromRepoRoot} not found above ${fromDirectory}: it ships with the program`);
    }
  }
}
