import { formatValue } from "./text";

/**
 * The cron schedules k3s accepts for `etcd-snapshot-schedule-cron`: k3s runs its snapshots
 * with robfig/cron's standard parser (k3s-io/k3s: pkg/etcd/etcd.go `cron.New`;
 * github.com/robfig/cron/v3@v3.0.1: parser.go `ParseStandard`): five fields (minute, hour,
 * day of month, month, day of week), each a comma list of `*`, `?`, `n` or `n-m`, optionally
 * `/step`, month and weekday also by name; or a descriptor such as `@daily`. This checks a
 * subset of that grammar (no `@every`, no `TZ=` prefix), so what it accepts k3s accepts.
 */
const fields = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], firstName: 1 },
  { name: "day of week", min: 0, max: 6, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], firstName: 0 },
] as const;

/** robfig/cron's descriptors without arguments (parser.go `parseDescriptor`). */
export const cronDescriptors = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"] as const;

const allowed = "allowed: five fields (minute hour day-of-month month day-of-week) such as \"0 */6 * * *\", or " + cronDescriptors.join(", ");

/** Why `text` is not a schedule k3s' cron parser accepts, or undefined. */
export function cronScheduleProblem(text: string): string | undefined {
  if ((cronDescriptors as readonly string[]).includes(text)) return undefined;
  // robfig splits with strings.Fields: any run of whitespace, leading and trailing ignored.
  const parts = text.split(/\s/).filter(Boolean);
  if (parts.length !== fields.length) {
    return `${formatValue(text)} has ${parts.length} fields, not a cron schedule; ${allowed}`;
  }
  for (const [index, field] of fields.entries()) {
    // Stryker disable next-line StringLiteral: equivalent, parts has one entry per field (checked above)
    const part = parts[index] ?? "";
    const problem = fieldProblem(part, field);
    if (problem) return `${formatValue(text)}: the ${field.name} field ${formatValue(part)} ${problem}; ${allowed}`;
  }
  return undefined;
}

type Field = (typeof fields)[number];

function valueOf(token: string, field: Field): number | undefined {
  if ("names" in field) {
    const named = (field.names as readonly string[]).indexOf(token.toLowerCase());
    if (named !== -1) return named + field.firstName;
  }
  return /^[0-9]{1,2}$/.test(token) ? Number(token) : undefined;
}

function fieldProblem(part: string, field: Field): string | undefined {
  for (const item of part.split(",")) {
    const match = /^([^/]+)(?:\/([0-9]{1,2}))?$/.exec(item);
    if (!match) return "is not a list of values, ranges and steps";
    // Stryker disable next-line StringLiteral: equivalent, the pattern's first group is required, so it is always set
    const [, range = "", step] = match;
    // Stryker disable next-line ConditionalExpression: equivalent, Number(undefined) is NaN, never 0
    if (step !== undefined && Number(step) === 0) return "has a step of 0";
    if (range === "*" || range === "?") continue;
    // Stryker disable next-line StringLiteral: equivalent, split always returns at least one entry
    const [low = "", high, ...rest] = range.split("-");
    if (rest.length > 0) return "has a range with two hyphens";
    const start = valueOf(low, field);
    const end = high === undefined ? start : valueOf(high, field);
    if (start === undefined || end === undefined) return `has a value that is not a number${"names" in field ? " or a name" : ""}`;
    if (start < field.min || end > field.max) return `is outside ${field.min}-${field.max}`;
    if (start > end) return "has a range that runs backwards";
  }
  return undefined;
}
