import _ from "lodash";
return {
  chunk: _.chunk(["a", "b", "c", "d"], 2),
  groupBy: _.groupBy([6.1, 4.2, 6.3], Math.floor),
  get: _.get({ a: [{ b: { c: 3 } }] }, "a[0].b.c"),
  uniq: _.uniq([2, 1, 2]),
  sortBy: _.sortBy([{ u: "fred", a: 48 }, { u: "barney", a: 36 }], ["a"]).map((o) => o.u),
  template: _.template("hello <%= user %>!")({ user: "fred" }),
  version: _.VERSION,
};
