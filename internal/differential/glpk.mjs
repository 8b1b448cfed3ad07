// Runs the glpk cases of glpk_test.go through glpk.js: reads a JSON array
// of cases on stdin and writes, for each, what glpk.solve returned (its
// "time" removed) and what it passed to cb.call, or glpk.write's text, or
// the message it threw,
// as JSON into the file named by its argument.
// The step in glpk_test.go does the same through Stepbox's glpk.
import { writeFileSync } from "node:fs";
import GLPK from "glpk.js/node";

const glpk = await GLPK();
let text = "";
for await (const chunk of process.stdin) text += chunk;
const out = [];
for (const c of JSON.parse(text)) {
  const calls = [];
  try {
    if (c.write) {
      out.push({ text: glpk.write(c.model) });
      continue;
    }
    let options = c.options;
    if (c.each !== undefined) options = { ...options, cb: { each: c.each, call: (s) => calls.push({ ...s, rows: "rows" in s ? s.rows : "absent" }) } };
    const r = glpk.solve(c.asText ? JSON.stringify(c.model) : c.model, options);
    delete r.time;
    out.push({ result: r, calls });
  } catch (e) {
    out.push({ error: String(e && e.message) });
  }
}
// A file, not stdout: glpk.js prints GLPK's messages there.
writeFileSync(process.argv[2], JSON.stringify(out));
