import * as L from "lodash";
return {
  defaultIsExports: typeof L.default === "function" && L.default.chunk === L.default.chunk,
  chunk: L.default.chunk([1, 2, 3], 2),
  hasDefault: Object.keys(L).includes("default"),
  tag: Object.prototype.toString.call(L),
};
