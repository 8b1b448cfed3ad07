import { parse, stringify } from "qs";
return [parse("x=1&y[]=2"), stringify({ q: "a b&c" })];
