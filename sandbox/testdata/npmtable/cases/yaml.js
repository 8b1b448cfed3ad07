import YAML from "yaml";
const doc = YAML.parse("a: 1\nb:\n  - x\n  - {y: [2, 3]}\nc: !!str 42\nd: 2026-07-01\nanchor: &x {k: v}\nref: *x\n");
return {
  doc,
  out: YAML.stringify({ name: "step", list: [1, "two", { three: 3 }], multi: "line1\nline2\n" }),
};
