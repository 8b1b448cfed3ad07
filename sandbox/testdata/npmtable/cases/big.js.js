import Big from "big.js";
const x = new Big(0.1);
return {
  sum: x.plus(0.2).toString(),
  float: 0.1 + 0.2,
  div: new Big(1).div(3).toFixed(10),
  pow: new Big(2).pow(100).toFixed(),
  cmp: [x.gt(0.09), x.eq("0.1")],
  round: new Big("123.456").round(2, Big.roundDown).toString(),
};
