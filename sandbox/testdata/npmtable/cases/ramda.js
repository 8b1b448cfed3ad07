import * as R from "ramda";
const byAge = R.sortBy(R.prop("age"));
const people = [{ name: "Emma", age: 70 }, { name: "Peter", age: 78 }, { name: "Mikhail", age: 62 }];
return {
  sorted: R.map(R.prop("name"), byAge(people)),
  pipe: R.pipe(R.filter((n) => n % 2 === 0), R.map(R.multiply(3)), R.sum)([1, 2, 3, 4]),
  groupBy: R.groupBy((p) => (p.age > 65 ? "old" : "young"), people),
  curry: R.add(2)(3),
  lens: R.view(R.lensPath(["a", "b"]), { a: { b: 7 } }),
};
