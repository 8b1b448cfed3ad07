// quickjs-emscripten (QuickJS compiled to WebAssembly) for bench/sidebyside;
// protocol in common.mjs.
//
// The WebAssembly module is loaded once per process (getQuickJS, the
// release-sync variant); every run gets a new QuickJSRuntime and context,
// disposed after the run. The module is single-threaded, so sustained
// throughput uses one worker thread (one module) per core.

import os from "node:os";
import { main, wrap, bridgeStep, bridgeTime, latency, rss, threads, workloadTimes } from "./common.mjs";

let QuickJS;
async function load() {
  if (!QuickJS) {
    const { getQuickJS } = await import("quickjs-emscripten");
    QuickJS = await getQuickJS();
  }
  return QuickJS;
}

// installBridge gives the context a dataProxy.request that returns a guest
// promise, settled when the host's async answer arrives: the promise-based
// host function the quickjs-emscripten README shows (newPromise, then
// executePendingJobs once it settles). Answers cross as JSON, parsed by the
// guest's JSON.parse. It returns the clean-up for the handles it keeps.
//
// The asyncified variant (newAsyncifiedFunction) cannot serve this step:
// after the step's first `await`, the guest resumes inside
// executePendingJobs, which is synchronous and cannot suspend.
function installBridge(vm, answer) {
  const parse = vm.unwrapResult(vm.evalCode("JSON.parse"));
  const fn = vm.newFunction("request", (mh, ph) => {
    const method = vm.getString(mh);
    const params = vm.dump(ph);
    const d = vm.newPromise();
    answer(method, params).then((value) => {
      if (!d.alive) return;
      const s = vm.newString(JSON.stringify(value ?? null));
      const v = vm.unwrapResult(vm.callFunction(parse, vm.undefined, s));
      s.dispose();
      d.resolve(v);
      v.dispose();
      d.dispose();
    });
    d.settled.then(() => { if (vm.alive) vm.runtime.executePendingJobs(); });
    return d.handle;
  });
  const proxy = vm.newObject();
  vm.setProp(proxy, "request", fn);
  vm.setProp(vm.global, "dataProxy", proxy);
  proxy.dispose();
  fn.dispose();
  return () => parse.dispose();
}

const answer = async (method, params) => params;

// newVM returns a fresh runtime's context with its memory limit.
function newVM(memoryLimitMB) {
  const rt = QuickJS.newRuntime();
  rt.setMemoryLimit(memoryLimitMB * 1024 * 1024);
  return rt.newContext();
}

// runOnce runs a step in a fresh runtime and returns its result.
async function runOnce(code, memoryLimitMB = 128, bridge = false) {
  const vm = newVM(memoryLimitMB);
  const rt = vm.runtime;
  let cleanup;
  try {
    if (bridge) cleanup = installBridge(vm, answer);
    const h = vm.unwrapResult(vm.evalCode(wrap(code), "step.js"));
    const settled = vm.resolvePromise(h);
    h.dispose();
    rt.executePendingJobs();
    const v = vm.unwrapResult(await settled);
    const out = vm.dump(v);
    v.dispose();
    return out;
  } finally {
    cleanup?.();
    vm.dispose();
    rt.dispose();
  }
}

const measures = {
  info: async () => { await load(); return {}; },

  latency: async ({ code, runs, warmup }) => {
    await load();
    return { ...(await latency(runs, warmup, () => runOnce(code))), how: "newRuntime + newContext + evalCode + resolvePromise + dispose per run" };
  },

  throughput: async ({ code, seconds }) => {
    const n = os.availableParallelism?.() ?? os.cpus().length;
    return { ...(await threads(import.meta.url, n, seconds, "throughput", { code })), how: `${n} worker threads, one WebAssembly module each` };
  },

  workloads: async ({ workloads, runs, warmup }) => {
    await load();
    return workloadTimes(workloads, runs, warmup, runOnce);
  },

  bridge: async ({ n, runs }) => {
    await load();
    const us = await bridgeTime(n, runs, (k) => runOnce(bridgeStep(k), 128, true));
    return { us_per_roundtrip: us, how: "promise-returning host function (newPromise, executePendingJobs once it settles)" };
  },

  memory: async ({ instances }) => {
    await load();
    const keep = [];
    const make = () => {
      const vm = newVM(128);
      const cleanup = installBridge(vm, answer);
      vm.unwrapResult(vm.evalCode("1 + 1")).dispose();
      return { vm, cleanup };
    };
    // The marginal cost: the RSS increase from the first half of the
    // runtimes to all of them, so that one-time costs (the glue code's
    // compilation, the first touches of the module's memory) do not count.
    const half = Math.max(1, Math.floor(instances / 2));
    for (let i = 0; i < half; i++) keep.push(make());
    const before = await rss();
    for (let i = half; i < instances; i++) keep.push(make());
    const after = await rss();
    // QuickJS's own count of the bytes one of them allocated, for the notes.
    const last = keep[keep.length - 1].vm;
    const usage = last.runtime.computeMemoryUsage();
    const own = last.dump(usage).memory_used_size;
    usage.dispose();
    for (const k of keep) { k.cleanup(); const rt = k.vm.runtime; k.vm.dispose(); rt.dispose(); }
    return {
      bytes_per_instance: (after - before) / (instances - half), instances,
      how: `RSS increase from ${half} to ${instances} idle runtimes + contexts (bridge installed, one evaluation done), per runtime; QuickJS's own count (computeMemoryUsage memory_used_size) ${(own / 1024).toFixed(0)} KB`,
    };
  },
};

main("quickjs-emscripten", measures, async (measure, params) => {
  await load();
  for (let i = 0; i < 20; i++) await runOnce(params.code);
  return () => runOnce(params.code);
});
