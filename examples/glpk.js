// A step with GLPK: stepbox run examples/glpk.js --modules glpk
// prints {"status":5,"z":112,"vars":{"a":20,"b":3}}: glpk.GLP_OPT, the best profit and the plan
const res = await glpk.solve({
  name: "royalties",
  objective: { direction: glpk.GLP_MAX, name: "profit", vars: [{ name: "a", coef: 5 }, { name: "b", coef: 4 }] },
  subjectTo: [
    { name: "press", vars: [{ name: "a", coef: 2 }, { name: "b", coef: 3 }], bnds: { type: glpk.GLP_UP, ub: 50 } },
    { name: "binding", vars: [{ name: "a", coef: 1 }], bnds: { type: glpk.GLP_UP, ub: 20 } },
  ],
  generals: ["a", "b"],
});
return { status: res.result.status, z: res.result.z, vars: res.result.vars };
