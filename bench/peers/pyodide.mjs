// Pyodide (CPython compiled to WebAssembly) in Node for bench/sidebyside;
// protocol in common.mjs.
//
// Cold: every run is loadPyodide() + runPython(), the isolation Pyodide
// gives (one interpreter per load). Warm: runPython() on one loaded
// interpreter, which runs share (globals, imports, monkey-patches: no
// isolation between runs). Everything loads from the npm package's own
// directory (indexURL), never from a CDN; the step needs no packages.

import os from "node:os";
import { main, packageDir, bridgeTime, latency, rss, threads } from "./common.mjs";

let loadPyodide;
let indexURL;
async function load() {
  if (!loadPyodide) {
    ({ loadPyodide } = await import("pyodide"));
    indexURL = packageDir("pyodide") + "/";
  }
}

async function interpreter() {
  await load();
  return loadPyodide({ indexURL, packageCacheDir: indexURL, stdout: () => {}, stderr: () => {} });
}

async function cold(code) {
  const py = await interpreter();
  return toJS(py.runPython(code));
}

function toJS(v) {
  return v?.toJs ? v.toJs() : v;
}

const cores = () => os.availableParallelism?.() ?? os.cpus().length;

const measures = {
  info: async () => { await load(); return {}; },

  latency: async ({ code, runs, warmup }) => ({
    ...(await latency(runs, warmup, () => cold(code))),
    how: "loadPyodide() + runPython() per run",
  }),

  "warm-latency": async ({ code, runs, warmup }) => {
    const py = await interpreter();
    return { ...(await latency(runs, warmup, () => toJS(py.runPython(code)))), how: "runPython() on one loaded interpreter" };
  },

  throughput: async ({ code, seconds }) => {
    const n = cores();
    return { ...(await threads(import.meta.url, n, seconds, "cold", { code })), how: `${n} worker threads, loadPyodide() + runPython() per run` };
  },

  "warm-throughput": async ({ code, seconds }) => {
    const n = cores();
    return { ...(await threads(import.meta.url, n, seconds, "warm", { code })), how: `${n} worker threads, one interpreter each` };
  },

  // The data bridge: an async JavaScript function, registered as a module,
  // awaited from Python under runPythonAsync.
  bridge: async ({ n, runs }) => {
    const py = await interpreter();
    py.registerJsModule("host", { request: async (method, params) => params });
    const step = (k) => `import host\ns = 0\nfor i in range(${k}):\n    s += await host.request("get", i)\ns`;
    const us = await bridgeTime(n, runs, async (k) => toJS(await py.runPythonAsync(step(k))));
    return { us_per_roundtrip: us, how: "async JS function (registerJsModule) awaited under runPythonAsync, one loaded interpreter" };
  },

  memory: async ({ instances }) => {
    const keep = [await interpreter()]; // code and one-time set-up are not per interpreter
    const base = keep.length;
    const before = await rss();
    for (let i = 0; i < instances; i++) {
      const py = await interpreter();
      py.runPython("1 + 1");
      keep.push(py);
    }
    const after = await rss();
    if (keep.length !== base + instances) throw new Error("lost an interpreter");
    return { bytes_per_instance: (after - before) / instances, instances, how: `RSS increase per idle loaded interpreter (one runPython each), ${instances} loaded after a first one` };
  },
};

main("pyodide", measures, async (measure, params) => {
  if (measure === "cold") {
    await load();
    return () => cold(params.code);
  }
  const py = await interpreter();
  for (let i = 0; i < 20; i++) py.runPython(params.code);
  return () => toJS(py.runPython(params.code));
});
