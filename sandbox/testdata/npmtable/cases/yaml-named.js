import { parse, stringify, parseDocument } from "yaml";
const d = parseDocument("# comment\nkey: value # trailing\n");
d.set("other", [1, 2]);
return { parsed: parse("[1, 2, {a: b}]"), doc: d.toString(), str: stringify("a: b") };
