import { describe, expect, it } from "vitest";
import { withoutCommentLines } from "./shell-comments";

const strip = (lines: string[]) => withoutCommentLines(lines.join("\n"), "test.sh");

describe("withoutCommentLines", () => {
  it("removes comment lines and blank lines, keeps the shebang and every other line byte for byte", () => {
    const script = [
      "#!/usr/bin/env bash",
      "# header",
      "  # indented comment",
      "\t#\ttabbed comment",
      "",
      "   ",
      "set -eu  # a comment after code stays",
      '  x=${1#v}   y="${2%%#*}"',
      "  echo '#' \"# not a comment\"",
      "#!/not/a/shebang on a later line",
    ];
    expect(strip(script)).toBe(
      ["#!/usr/bin/env bash", "set -eu  # a comment after code stays", '  x=${1#v}   y="${2%%#*}"', "  echo '#' \"# not a comment\""].join("\n"),
    );
  });

  it("keeps the file's last newline, or its absence", () => {
    expect(withoutCommentLines("#!/bin/sh\n# c\necho\n", "a")).toBe("#!/bin/sh\necho\n");
    expect(withoutCommentLines("#!/bin/sh\n# c\necho", "a")).toBe("#!/bin/sh\necho");
    expect(withoutCommentLines("echo\n\n\n", "a")).toBe("echo\n");
    expect(withoutCommentLines("", "a")).toBe("");
    // The last newline ends the last line; it is not a blank line after it.
    expect(withoutCommentLines("echo a \\\n", "a")).toBe("echo a \\\n");
  });

  it("keeps a shebang only on the first line, and only a shebang there", () => {
    expect(withoutCommentLines("# not a shebang\necho\n", "a")).toBe("echo\n");
  });

  it("keeps a here-document's body whole, whatever its quoting, and strips again after its terminator", () => {
    for (const word of ["EOF", "'EOF'", '"EOF"', " EOF"]) {
      const script = ["cat <<" + word, "# body", "", "  EOF", "EOF", "# after", "echo done"];
      expect(strip(script), word).toBe(["cat <<" + word, "# body", "", "  EOF", "EOF", "echo done"].join("\n"));
    }
  });

  it("ends a <<- here-document at a tab-indented terminator, and a << one only at the bare word", () => {
    expect(strip(["cat <<-EOF", "\t# body", "\t\tEOF", "# after"])).toBe(["cat <<-EOF", "\t# body", "\t\tEOF"].join("\n"));
    // Only leading tabs go: a tab after the word leaves a body line.
    expect(() => strip(["cat <<-EOF", "EOF\t", "# body"])).toThrow('here-document "EOF" has no terminator line');
    expect(() => strip(["cat <<EOF", "\t# body", "\tEOF", "# after"])).toThrow('test.sh: here-document "EOF" has no terminator line');
  });

  it("reads the bodies of several here-documents on one line in order", () => {
    const script = ["paste <<A <<'B'", "# in A", "A", "# in B", "A", "B", "# after", "echo"];
    expect(strip(script)).toBe(["paste <<A <<'B'", "# in A", "A", "# in B", "A", "B", "echo"].join("\n"));
  });

  it("takes a here-string for what it is, not a here-document", () => {
    expect(strip(['grep -q x <<<"$text"', "# comment", "EOF", "echo"])).toBe(['grep -q x <<<"$text"', "EOF", "echo"].join("\n"));
    expect(strip(["a <<<x <<EOF", "# body", "EOF"])).toBe(["a <<<x <<EOF", "# body", "EOF"].join("\n"));
  });

  it.each([
    ["an arithmetic shift", "echo $((1<<2))"],
    ["a here-document word it does not read", "cat <<\\EOF"],
    ["an expanded word", "cat << $word"],
    ["a word quoted differently on each side", "cat <<'EOF\""],
    ["an unreadable one before a plain one", "cat <<$(echo x) <<EOF"],
  ])("refuses %s, naming the line", (_, line) => {
    expect(() => strip(["#!/bin/bash", line])).toThrow(`test.sh line 2: "<<" that is neither a here-string nor a plain here-document`);
  });

  it("refuses a here-document that never ends", () => {
    expect(() => strip(["cat <<'PYTHON'", "# body"])).toThrow('test.sh: here-document "PYTHON" has no terminator line');
  });

  it("refuses to remove a comment or blank line that a trailing backslash joins to the line before", () => {
    expect(() => strip(["echo a \\", "  # joined", "echo b"])).toThrow('test.sh line 2: a comment or blank line after a line continued with "\\"');
    expect(() => strip(["echo a \\", "", "echo b"])).toThrow("test.sh line 2:");
    // An even run of backslashes is an escaped backslash, not a continuation.
    expect(strip(["echo a \\\\", "# c", "echo b"])).toBe(["echo a \\\\", "echo b"].join("\n"));
    // A continued line followed by code, then a comment, is fine.
    expect(strip(["echo a \\", "  b", "# c", "echo"])).toBe(["echo a \\", "  b", "echo"].join("\n"));
  });

  it("does not carry a backslash of a here-document's opening line past the body", () => {
    expect(strip(["cat <<'E' \\", "body \\", "E", "# after"])).toBe(["cat <<'E' \\", "body \\", "E"].join("\n"));
  });
});
