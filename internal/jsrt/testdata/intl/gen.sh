#!/bin/sh
# Writes golden.json: node's value for every case of cases.js, in UTC as a
# run's default time zone is. Run from anywhere: sh internal/jsrt/testdata/intl/gen.sh
set -eu
cd "$(dirname "$0")"
TZ=UTC LANG=en_US.UTF-8 node -e '
const fs = require("fs");
eval(fs.readFileSync("cases.js", "utf8") + "; globalThis.out = evaluate()");
fs.writeFileSync("golden.json", JSON.stringify({node: process.version, icu: process.versions.icu, cases: out}, null, 1) + "\n");
'
