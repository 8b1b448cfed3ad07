import qs from "qs";
return {
  parse: qs.parse("a[b][c]=d&e=1&e=2&f[]=x"),
  stringify: qs.stringify({ a: { b: { c: "d e" } }, arr: [1, 2] }, { encode: false }),
  brackets: qs.stringify({ a: ["b", "c"] }, { arrayFormat: "brackets" }),
  dots: qs.parse("a.b=c", { allowDots: true }),
};
