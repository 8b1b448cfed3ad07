#!/bin/sh
# Writes node's value for every case: golden.json (cases.js, English) and
# locales/L.json (locales.js, for each locale L of
# internal/intl/gen/locales.txt), in UTC as a run's default time zone is.
# Run from anywhere: sh internal/jsrt/testdata/intl/gen.sh
set -eu
cd "$(dirname "$0")"
TZ=UTC LANG=en_US.UTF-8 node -e '
const fs = require("fs");
eval(fs.readFileSync("cases.js", "utf8") + "; globalThis.out = evaluate()");
fs.writeFileSync("golden.json", JSON.stringify({node: process.version, icu: process.versions.icu, cases: out}, null, 1) + "\n");
'
mkdir -p locales
rm -f locales/*.json
TZ=UTC LANG=en_US.UTF-8 node -e '
const fs = require("fs");
eval(fs.readFileSync("locales.js", "utf8") + "; globalThis.run = evaluate");
const list = fs.readFileSync("../../../intl/gen/locales.txt", "utf8").split("\n").map(s => s.trim()).filter(s => s && s[0] !== "#");
for (const L of list) {
  const cases = run(L);
  // One case a line, so that a change reads as a diff of cases.
  const lines = cases.map(c => JSON.stringify(c)).join(",\n");
  fs.writeFileSync("locales/" + L + ".json", "{\"node\": " + JSON.stringify(process.version) + ", \"icu\": " + JSON.stringify(process.versions.icu) + ", \"locale\": " + JSON.stringify(L) + ", \"cases\": [\n" + lines + "\n]}\n");
}
'
