import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { closestMatch, editDistance, formatValue } from "./text";

/**
 * Levenshtein distance by its recursive definition (insert, delete or substitute one character,
 * each costing 1), ignoring case as the suggestions do: an independent oracle for the
 * two-row dynamic programme in text.ts. Exponential without the memo, so only for short words.
 */
function levenshtein(a: string, b: string): number {
  const memo = new Map<string, number>();
  const d = (i: number, j: number): number => {
    if (i === 0) return j;
    if (j === 0) return i;
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const same = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase();
    const value = Math.min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (same ? 0 : 1));
    memo.set(key, value);
    return value;
  };
  return d(a.length, b.length);
}

// Small alphabets make equal characters (and so every branch of the recurrence) likely.
const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "A", "-"), maxLength: 7 });

describe("editDistance", () => {
  it("is the Levenshtein distance, case-insensitive", () => {
    fc.assert(
      fc.property(word, word, (a, b) => {
        expect(editDistance(a, b)).toBe(levenshtein(a, b));
      }),
      { numRuns: 500 },
    );
  });

  it("counts one edit per inserted, deleted or substituted character, none for case", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("abc", "")).toBe(3);
    expect(editDistance("nodesCidr", "NODESCIDR")).toBe(0);
    expect(editDistance("flaw", "lawn")).toBe(2);
  });
});

describe("closestMatch", () => {
  it("suggests the nearest candidate within a third of the word's length (at least 2 edits)", () => {
    // 9 characters: up to 3 edits.
    expect(closestMatch("nodesCidr", ["podsCidr", "nodesSubnetCidr"])).toBe("podsCidr");
    expect(closestMatch("nodesCIDR", ["servicesCidr", "nodesCidr"])).toBe("nodesCidr");
    expect(closestMatch("abcdefghi", ["abcxyzghi"])).toBe("abcxyzghi");
    expect(closestMatch("abcdefghi", ["abwxyzghi"])).toBeUndefined();
    // Short words still get 2 edits.
    expect(closestMatch("ab", ["ba"])).toBe("ba");
    expect(closestMatch("ab", ["xyz"])).toBeUndefined();
    // 12 characters: 4 edits (the floor of a third), not 5.
    expect(closestMatch("abcdefghijkl", ["abcdwxyzijkl"])).toBe("abcdwxyzijkl");
    expect(closestMatch("abcdefghijkl", ["abcvwxyzijkl"])).toBeUndefined();
    // 8 characters: floor(8/3) = 2 edits, not 3.
    expect(closestMatch("abcdefgh", ["abxyefgh"])).toBe("abxyefgh");
    expect(closestMatch("abcdefgh", ["axyzefgh"])).toBeUndefined();
  });

  it("keeps the first of equally near candidates and a nearer one over an earlier one", () => {
    expect(closestMatch("regions", ["regionx", "regiony"])).toBe("regionx");
    expect(closestMatch("regions", ["regionxy", "regionx"])).toBe("regionx");
    expect(closestMatch("regions", [])).toBeUndefined();
  });
});

describe("formatValue", () => {
  it("renders values as JSON, undefined as nothing, and what JSON cannot render by its type", () => {
    expect(formatValue("eu")).toBe('"eu"');
    expect(formatValue(2)).toBe("2");
    expect(formatValue({ a: [1] })).toBe('{"a":[1]}');
    expect(formatValue(undefined)).toBe("nothing");
    expect(formatValue(() => 1)).toBe("function");
  });

  it("shortens a rendering longer than 60 characters to 57 and an ellipsis", () => {
    const rendered = (length: number) => formatValue("x".repeat(length - 2)); // the quotes are 2 characters
    expect(rendered(60)).toHaveLength(60);
    expect(rendered(60).endsWith('"')).toBe(true);
    expect(rendered(61)).toBe(`"${"x".repeat(56)}…`);
  });
});
