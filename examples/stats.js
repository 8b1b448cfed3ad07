// A step that imports a package of the operator's catalogue (simple-statistics,
// the built-in catalogue's; stepbox run installs it on first use):
// stepbox run examples/stats.js --input '{"xs": [2, 4, 4, 4, 5, 5, 7, 9]}'
// prints {"mean":5,"median":4.5,"sd":2,"slope":2}
import { mean, median, standardDeviation } from "simple-statistics";
const ss = await import("simple-statistics");
const fit = ss.linearRegression(input.xs.map((x, i) => [i, 2 * i + 1]));
return { mean: mean(input.xs), median: median(input.xs), sd: standardDeviation(input.xs), slope: fit.m };
