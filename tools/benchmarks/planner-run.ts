// One planner sample in a fresh process (part 3 of `npm run bench`); prints one JSON line (PlannerResult).
import { measurePlanner, randomTriples, syntheticKubernetesVersions } from "./planner";

const count = Number(process.argv[2] ?? "100000");
const versions = syntheticKubernetesVersions();
// The same seed every run: samples differ only in timing.
console.log(JSON.stringify(measurePlanner(versions, randomTriples(versions, count))));
