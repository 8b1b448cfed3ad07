import Papa from "papaparse";
const parsed = Papa.parse("name,age\nAda,36\n\"Smith, J\",41\n", { header: true, dynamicTyping: true, skipEmptyLines: true });
return {
  data: parsed.data,
  fields: parsed.meta.fields,
  errors: parsed.errors.length,
  unparse: Papa.unparse([{ a: 1, b: "x,y" }, { a: 2, b: 'q"' }]),
};
