/** Small text helpers for config error messages. */

/** A short, quoted rendering of a config value for messages (a quoted string, 2, a mapping). */
export function formatValue(value: unknown): string {
  if (value === undefined) {
    return "nothing";
  }
  // JSON.stringify yields undefined for functions and symbols.
  const text = (JSON.stringify(value) as string | undefined) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** Edit distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0] ?? 0;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j] ?? 0;
      const cost = a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1;
      previous[j] = Math.min(above + 1, (previous[j - 1] ?? 0) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return previous[b.length] ?? 0;
}

/** The candidate closest to `word`, if it is close enough to be a likely typo. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (!best || distance < best.distance) {
      best = { candidate, distance };
    }
  }
  const tolerance = Math.max(2, Math.floor(word.length / 3));
  return best && best.distance <= tolerance ? best.candidate : undefined;
}
