#!/bin/sh
# Regenerates golden.json, what Node gives for cases.js (node 20 or later):
#   internal/jsrt/testdata/web/gen.sh
# The interval keeps Node running while the table waits on
# AbortSignal.timeout, whose timer Node does not count as work.
set -eu
cd "$(dirname "$0")"
node -e '
const fs = require("fs");
eval(fs.readFileSync("cases.js", "utf8") + "\nglobalThis.run = run;");
const keep = setInterval(() => {}, 1000);
run().then((out) => { fs.writeFileSync("golden.json", JSON.stringify(out, null, 1) + "\n"); clearInterval(keep); },
  (e) => { console.error(e); process.exit(1); });
'
