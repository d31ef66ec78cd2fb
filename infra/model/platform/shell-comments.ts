/**
 * The text of a shell script as it ships inside a manifest: without its comment lines and
 * blank lines, so that editing a comment leaves the manifest, and everything derived from it
 * (a template's content hash, hence the machines built from it), unchanged.
 *
 * The rule is deliberately narrow, so that it cannot change what bash runs:
 * - it removes only lines that are empty or whose first non-blank character is `#`, except
 *   the shebang on the first line; a comment after code on the same line stays, and every
 *   kept line is kept byte for byte;
 * - it keeps a here-document's body whole (bash does not read comments there), and it refuses
 *   any `<<` it cannot read as a plain here-document (`<<WORD`, `<<'WORD'`, `<<"WORD"`, with or
 *   without `-`) or a here-string (`<<<`), and a here-document without its terminator;
 * - it refuses to remove a line right after a line continued by a trailing backslash (bash
 *   would join the two, and removing the second would join the first to the next command).
 * What the rule cannot see is a quoted string that spans lines: the tests that ship each
 * script check, with bash's own parser, that the stripped text is the same program as its
 * source (infra/model/platform/shell-comments.test.ts).
 */

/** A here-document whose body is still being read. */
interface OpenHereDocument {
  terminator: string;
  /** `<<-`: bash strips leading tabs from the body's lines and the terminator's. */
  stripsTabs: boolean;
}

/** The here-documents a kept line opens, in order; throws on a `<<` that is neither form the rule knows. */
function hereDocumentsOpenedBy(line: string, where: string): OpenHereDocument[] {
  // The operator and its word: `<<`, an optional `-`, then a name, bare or quoted alike on both sides.
  const hereDocumentStart = /^<<(-?)[ \t]*(['"]?)([A-Za-z_]\w*)\2/;
  const opened: OpenHereDocument[] = [];
  for (let at = line.indexOf("<<"); at !== -1; at = line.indexOf("<<", at)) {
    const rest = line.slice(at);
    if (rest.startsWith("<<<")) {
      at += "<<<".length;
      continue;
    }
    const match = hereDocumentStart.exec(rest);
    if (!match) {
      throw new Error(`${where}: "<<" that is neither a here-string nor a plain here-document; comments cannot be stripped safely`);
    }
    opened.push({ terminator: String(match[3]), stripsTabs: match[1] === "-" });
    at += match[0].length;
  }
  return opened;
}

/** Whether a line ends in a backslash that continues it on the next line (an odd run of them). */
function continuesOnNextLine(line: string): boolean {
  const trailingBackslashes = /\\+$/.exec(line)?.[0].length ?? 0;
  return trailingBackslashes % 2 === 1;
}

/**
 * `script` without its comment lines and blank lines (see the module comment for the exact
 * rule); `name` says which script in an error. Throws where the rule cannot be sure.
 */
export function withoutCommentLines(script: string, name: string): string {
  const endsWithNewline = script.endsWith("\n");
  const lines = (endsWithNewline ? script.slice(0, -1) : script).split("\n");
  const kept: string[] = [];
  const openHereDocuments: OpenHereDocument[] = [];
  /** Whether the line before is code that a trailing backslash continues onto this one. */
  let continued = false;
  lines.forEach((line, index) => {
    const where = `${name} line ${index + 1}`;
    const hereDocument = openHereDocuments[0];
    if (hereDocument) {
      kept.push(line);
      continued = false;
      const body = hereDocument.stripsTabs ? line.replace(/^\t+/, "") : line;
      if (body === hereDocument.terminator) openHereDocuments.shift();
      return;
    }
    const isShebang = index === 0 && line.startsWith("#!");
    if (!isShebang && /^\s*(#|$)/.test(line)) {
      if (continued) {
        throw new Error(`${where}: a comment or blank line after a line continued with "\\"; comments cannot be stripped safely`);
      }
      return;
    }
    kept.push(line);
    continued = continuesOnNextLine(line);
    openHereDocuments.push(...hereDocumentsOpenedBy(line, where));
  });
  const unterminated = openHereDocuments[0];
  if (unterminated) {
    throw new Error(`${name}: here-document "${unterminated.terminator}" has no terminator line`);
  }
  return kept.join("\n") + (endsWithNewline ? "\n" : "");
}
