import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../tests/support/stack-files";
import { carenExtensionNames } from "./caren-extensions";
import { hetznerClusterClassManifests, type HetznerClusterClassManifests } from "./hetzner-cluster-class";
import { advertisePrivateAddressScript, advertisePrivateAddressScriptFile, committedNodeScripts, installKubernetesScript, installKubernetesScriptFile } from "./node-bootstrap";
import { withoutCommentLines } from "./shell-comments";

// The node scripts ship inside the ClusterClass's templates, whose names are a hash of their
// content: what they carry must not depend on the scripts' comments, or a comment edit would
// roll every tenant's machines.

const shippedScripts = [
  { file: installKubernetesScriptFile, shipped: installKubernetesScript },
  { file: advertisePrivateAddressScriptFile, shipped: advertisePrivateAddressScript },
];

/**
 * The class and its templates as the real builder makes them when the committed scripts read
 * as `edit` makes them (each script's path from the repository root, its text).
 */
function classBuiltFrom(edit: (file: string, text: string) => string): HetznerClusterClassManifests {
  return hetznerClusterClassManifests({
    carenExtensionNames: carenExtensionNames(),
    nodeScripts: {
      installKubernetes: edit(installKubernetesScriptFile, committedNodeScripts.installKubernetes),
      advertisePrivateAddress: edit(advertisePrivateAddressScriptFile, committedNodeScripts.advertisePrivateAddress),
    },
  });
}

/** Every line of a script, with `change` applied to the ones `which` selects. */
const editLines = (text: string, which: (line: string) => boolean, change: (line: string) => string) =>
  text
    .split("\n")
    .map((line) => (which(line) ? change(line) : line))
    .join("\n");

const isComment = (line: string) => /^\s*#/.test(line) && !line.startsWith("#!");

describe("the node scripts in the ClusterClass", () => {
  it("do not change when only comments and blank lines change; a code change does (negative control)", () => {
    const unchanged = classBuiltFrom((_, text) => text);
    const commentEdits: string[] = [];
    const commentsEdited = classBuiltFrom((file, text) => {
      // Reworded comments, a new comment line with blank lines around it, and a dropped one.
      const edited = editLines(text, isComment, (line) => `${line} (reworded)`).replace("\nset -Eeuo pipefail\n", "\n\n# a new comment\n\nset -Eeuo pipefail\n");
      commentEdits.push(file);
      expect(edited).not.toBe(text);
      return edited;
    });
    expect(commentEdits.sort()).toEqual(shippedScripts.map(({ file }) => file).sort());
    expect(commentsEdited).toEqual(unchanged);

    const codeEdited = classBuiltFrom((file, text) => (file === installKubernetesScriptFile ? text.replace("\nset -Eeuo pipefail\n", "\nset -Eeuo pipefail\numask 022\n") : text));
    // A new install script is a new control-plane and worker template, which rolls the machines.
    const names = (manifests: HetznerClusterClassManifests) => Object.fromEntries(Object.entries(manifests.templates).map(([role, manifest]) => [role, manifest.metadata.name]));
    const changedRoles = Object.keys(names(unchanged)).filter((role) => names(unchanged)[role] !== names(codeEdited)[role]);
    expect(changedRoles.sort()).toEqual(["controlPlane", "workerBootstrap"]);
    expect(codeEdited.clusterClass).not.toEqual(unchanged.clusterClass);
  });

  it("are written at absolute paths, one per script, that the class's commands run", () => {
    const { templates, clusterClass } = classBuiltFrom((_, text) => text);
    type Files = { files: { path: string; content: string }[] };
    const controlPlane = (templates.controlPlane.spec as { template: { spec: { kubeadmConfigSpec: Files } } }).template.spec.kubeadmConfigSpec.files;
    const worker = (templates.workerBootstrap.spec as { template: { spec: Files } }).template.spec.files;
    const paths = controlPlane.map((file) => file.path);
    expect(paths).toHaveLength(shippedScripts.length);
    expect(new Set(paths).size).toBe(paths.length);
    for (const file of [...controlPlane, ...worker]) {
      expect(file.path).toMatch(/^(\/[\w.-]+)+\.sh$/);
      expect(shippedScripts.map(({ shipped }) => shipped)).toContain(file.content);
      // The patches' commands start with the script's path (JSON strings inside Go templates).
      expect(JSON.stringify(clusterClass.spec)).toContain(`\\"${file.path}`);
    }
  });

  it.each(shippedScripts)("carry $file without its comment lines", ({ file, shipped }) => {
    const source = readFileSync(path.join(repoRoot, file), "utf8");
    expect(shipped).toBe(withoutCommentLines(source, file));
    expect(shipped.startsWith("#!/usr/bin/env bash\n")).toBe(true);
    expect(shipped.split("\n").length).toBeLessThan(source.split("\n").length);
    // Of the source's own comment lines, none reaches a node.
    expect(shipped).not.toContain("Tunables (tests use them");
  });
});

/**
 * The script as bash parses it: the text as a function's body, printed back by `declare -f`,
 * which drops comments and normalises layout but keeps every command, string and here-document.
 * Parsing runs nothing of the script.
 */
function parsedByBash(text: string): string {
  const result = spawnSync("bash", ["-c", `__script() {\n${text}\n}\ndeclare -f __script`], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe("stripping comment lines (bash's own parser as the judge)", () => {
  it.each(shippedScripts)("leaves $file the same program", ({ file, shipped }) => {
    expect(parsedByBash(shipped)).toBe(parsedByBash(readFileSync(path.join(repoRoot, file), "utf8")));
  });

  it("tells a changed program apart: a '#' line inside a quoted string is text (negative control)", () => {
    const source = ["#!/usr/bin/env bash", 'message="first', "# second", 'third"', 'echo "$message"', ""].join("\n");
    const naive = source.replace("# second\n", "");
    expect(parsedByBash(naive)).not.toBe(parsedByBash(source));
    expect(parsedByBash(source.replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n# a comment\n"))).toBe(parsedByBash(source));
  });
});
