import { evaluate, round, atan2, chain, matrix, multiply, fraction, format, unit, sqrt } from "mathjs";
return {
  evaluate: [evaluate("12 / (2.3 + 0.7)"), evaluate("12.7 cm to inch").toString(), evaluate("sin(45 deg) ^ 2")],
  round: round(Math.E, 3),
  atan2: round(atan2(3, -3) / Math.PI, 4),
  chain: chain(3).add(4).multiply(2).done(),
  matrix: multiply(matrix([[1, 2], [3, 4]]), matrix([[5], [6]])).toArray(),
  fraction: format(fraction(1, 3).add(fraction(1, 6))),
  unit: unit("5 km").to("mile").toNumber("mile"),
  complex: sqrt(-4).toString(),
};
