// Shared by the peer harnesses that bench/sidebyside runs.
//
// Protocol: `node PEER.mjs MEASURE 'PARAMS-JSON'` prints exactly one JSON
// line on stdout: the measure's fields plus `version`, or `{"error": "..."}`.
// Anything else the script prints goes to stderr. Times are wall-clock
// (performance.now), memory is the process's RSS.

import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);

// version returns the installed version of an npm package. A package whose
// "exports" leave out its package.json (DuckDB-WASM) is found from its
// entry point, up to the directory whose package.json names it.
export function version(pkg) {
  try {
    return require(`${pkg}/package.json`).version;
  } catch (e) {
    if (e?.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw e;
  }
  for (let dir = path.dirname(require.resolve(pkg)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const f = path.join(dir, "package.json");
    if (fs.existsSync(f)) {
      const p = JSON.parse(fs.readFileSync(f, "utf8"));
      if (p.name === pkg) return p.version;
    }
  }
  throw new Error(`cannot find the package.json of ${pkg}`);
}

// packageDir returns the directory of an installed npm package.
export function packageDir(pkg) {
  const p = require.resolve(`${pkg}/package.json`);
  return p.slice(0, p.length - "/package.json".length);
}

// wrap turns a step (an async function body) into an expression whose value
// is the promise of the step's result.
export function wrap(body) {
  return `(async () => {\n${body}\n})()`;
}

// bridgeStep is the data-bridge step: n awaited host requests.
export function bridgeStep(n) {
  return `let s = 0;\nfor (let i = 0; i < ${n}; i++) s += await dataProxy.request("get", i);\nreturn s;`;
}

// bridgeTime times the data-bridge step: a warm-up run of n/10 requests,
// then `runs` runs of n; it checks each result and returns the median run's
// wall time divided by n, in microseconds. runStep(k) runs the step with k
// requests and returns its result.
export async function bridgeTime(n, runs, runStep) {
  await runStep(Math.max(1, Math.ceil(n / 10)));
  const ts = [];
  for (let i = 0; i < Math.max(1, runs); i++) {
    const t0 = performance.now();
    const result = await runStep(n);
    ts.push(performance.now() - t0);
    if (result !== (n * (n - 1)) / 2) throw new Error(`bridge step returned ${result}, want ${(n * (n - 1)) / 2}`);
  }
  ts.sort((a, b) => a - b);
  return (at(ts, 0.5) * 1000) / n;
}

// at is the p-quantile of sorted, the same rule as the Go side.
export function at(sorted, p) {
  return sorted[Math.floor((sorted.length - 1) * p)];
}

// latency runs fn warmup times, then n times, and returns the percentiles
// of the n wall times in milliseconds and the last result.
export async function latency(n, warmup, fn) {
  let result;
  for (let i = 0; i < warmup; i++) result = await fn();
  const lat = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    result = await fn();
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  return { p50_ms: at(lat, 0.5), p99_ms: at(lat, 0.99), n, result };
}

// median runs fn warmup times, then n times, and returns the median wall
// time in milliseconds and the last result.
export async function median(n, warmup, fn) {
  const r = await latency(n, warmup, fn);
  return { ms: r.p50_ms, n, result: r.result };
}

// workloadTimes runs each workload with runOnce(code, memoryMb) and returns
// its median time, in the shape the harness reads for the workloads measure.
export async function workloadTimes(workloads, runs, warmup, runOnce) {
  const out = {};
  for (const [name, code] of Object.entries(workloads)) {
    // A workload the engine cannot run (one using a global it lacks)
    // fails its own cell only.
    try {
      out[name] = await median(runs, warmup, () => runOnce(code, 512));
    } catch (e) {
      out[name] = { error: String((e && e.message) || e).split("\n")[0] };
    }
  }
  return { workloads: out };
}

// rss returns the process's resident set size in bytes, after a full
// garbage collection when node runs with --expose-gc.
export async function rss() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
  return process.memoryUsage().rss;
}

// threads measures sustained runs per second: `count` worker threads, each
// running this same script with `measure` and `params` in workerData, set
// up (the script's `loop` export prepares once, then returns a function
// that performs one run), then all run for `seconds` at once.
export async function threads(scriptURL, count, seconds, measure, params) {
  const workers = [];
  const ready = [];
  const done = [];
  for (let i = 0; i < count; i++) {
    const w = new Worker(new URL(scriptURL), { workerData: { measure, params, seconds } });
    workers.push(w);
    ready.push(once(w, "ready"));
    done.push(once(w, "done"));
  }
  try {
    await Promise.all(ready);
    const t0 = performance.now();
    for (const w of workers) w.postMessage("go");
    const counts = await Promise.all(done);
    const elapsed = (performance.now() - t0) / 1000;
    const runs = counts.reduce((s, m) => s + m.runs, 0);
    return { runs_per_s: runs / elapsed, runs, seconds: elapsed, threads: count };
  } finally {
    for (const w of workers) await w.terminate();
  }
}

function once(w, kind) {
  return new Promise((resolve, reject) => {
    w.on("message", (m) => { if (m.kind === kind) resolve(m); });
    w.on("error", reject);
    w.on("exit", (code) => reject(new Error(`worker thread exited (${code}) before "${kind}"`)));
  });
}

// main runs the script: in a worker thread started by threads(), it sets up
// one run with prepare(measure, params), reports ready, and loops until the
// time is up; in the main thread it calls measures[measure](params) and
// prints the JSON line.
export async function main(pkg, measures, prepare) {
  if (!isMainThread) {
    const { measure, params, seconds } = workerData;
    const run = await prepare(measure, params);
    parentPort.postMessage({ kind: "ready" });
    await new Promise((r) => parentPort.once("message", r));
    const end = performance.now() + seconds * 1000;
    let runs = 0;
    while (performance.now() < end) {
      await run();
      runs++;
    }
    parentPort.postMessage({ kind: "done", runs });
    return;
  }
  const [measure, json] = process.argv.slice(2);
  let out;
  try {
    const v = version(pkg);
    const fn = measures[measure];
    if (!fn) throw new Error(`unknown measure ${JSON.stringify(measure)}`);
    out = { version: v, ...(await fn(JSON.parse(json || "{}"))) };
  } catch (e) {
    out = { error: String(e?.stack || e).split("\n").slice(0, 3).join(" | ") };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  // Pyodide and worker threads may keep handles open; the answer is out.
  process.exit(0);
}
