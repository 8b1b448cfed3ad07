import * as ss from "simple-statistics";
const xs = [1, 2, 3, 4, 10];
return {
  mean: ss.mean(xs),
  median: ss.median(xs),
  sd: ss.standardDeviation(xs),
  quantile: ss.quantile(xs, 0.25),
  regression: ss.linearRegression([[0, 1], [1, 3], [2, 5]]),
  r: ss.sampleCorrelation([1, 2, 3, 4], [2, 4, 6, 9]),
};
