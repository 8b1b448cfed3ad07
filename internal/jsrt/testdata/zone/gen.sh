#!/bin/sh
# Writes golden.json: node's value for every case of cases.js, once per
# time zone with TZ set to it. Run from anywhere:
#   sh internal/jsrt/testdata/zone/gen.sh
set -eu
cd "$(dirname "$0")"
LANG=en_US.UTF-8 node -e '
const fs = require("fs"), { execFileSync } = require("child_process");
const src = fs.readFileSync("cases.js", "utf8");
const zones = eval(src + "; zones");
const out = {};
for (const z of zones) {
  out[z] = JSON.parse(execFileSync(process.execPath, ["-e", src + "; process.stdout.write(JSON.stringify(evaluate()))"], { env: { ...process.env, TZ: z } }));
}
fs.writeFileSync("golden.json", JSON.stringify({ node: process.version, icu: process.versions.icu, tz: process.versions.tz, zones: out }, null, 1) + "\n");
'
