// isolated-vm (V8 isolates) for bench/sidebyside; protocol in common.mjs.
// Run with `node --no-node-snapshot --expose-gc`: isolated-vm requires
// --no-node-snapshot on Node 20 and later.
//
// Every run gets a new Isolate and Context, disposed after the run: the
// isolation a user of isolated-vm gets per untrusted step. The asynchronous
// API is used throughout (compile and run on isolated-vm's own threads), as a
// server that must not block its event loop would.

import { main, wrap, bridgeStep, bridgeTime, latency, rss, workloadTimes } from "./common.mjs";

let ivm;
async function load() {
  ivm ??= (await import("isolated-vm")).default;
  return ivm;
}

// runOnce runs a step in a fresh isolate and returns its result, copied out.
async function runOnce(code, memoryLimit = 128, host) {
  const iso = new ivm.Isolate({ memoryLimit });
  try {
    const ctx = await iso.createContext();
    if (host) await host(ctx);
    return await ctx.eval(wrap(code), { promise: true, copy: true, filename: "file:///step.js" });
  } finally {
    iso.dispose();
  }
}

// The data bridge, both ways isolated-vm documents for a host function that
// answers asynchronously: the fastest is reported.
const bridges = {
  // The guest calls a Reference to the host's async function with
  // apply(..., {result: {promise: true}}): the guest gets a promise.
  "Reference.apply (result.promise)": async (ctx, answer) => {
    const ref = new ivm.Reference(answer);
    await ctx.evalClosure(
      `globalThis.dataProxy = { request: (m, p) => $0.apply(undefined, [m, p], { arguments: { copy: true }, result: { promise: true, copy: true } }) }`,
      [ref],
    );
  },
  // applySyncPromise: the isolate's thread waits for the host's promise
  // (the call must come from a non-default thread: the async API).
  "Reference.applySyncPromise": async (ctx, answer) => {
    const ref = new ivm.Reference(async (m, p) => new ivm.ExternalCopy(await answer(m, p)).copyInto({ release: true }));
    await ctx.evalClosure(
      `globalThis.dataProxy = { request: async (m, p) => $0.applySyncPromise(undefined, [m, p], { arguments: { copy: true } }) }`,
      [ref],
    );
  },
};

// The host's answer: an asynchronous function echoing the parameters, the
// same answer the Go side gives Stepbox.
const answer = async (method, params) => params;

const measures = {
  info: async () => { await load(); return {}; },

  latency: async ({ code, runs, warmup }) => {
    await load();
    return { ...(await latency(runs, warmup, () => runOnce(code))), how: "new Isolate + createContext + eval(promise, copy) + dispose per run" };
  },

  throughput: async ({ code, seconds, concurrency }) => {
    await load();
    // isolated-vm runs isolates on its own threads: `concurrency` runs in
    // flight from the one Node thread use every core.
    let runs = 0;
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await runOnce(code);
        runs++;
      }
    }));
    const elapsed = (performance.now() - t0) / 1000;
    return { runs_per_s: runs / elapsed, runs, seconds: elapsed, how: `${concurrency} runs in flight (async API)` };
  },

  workloads: async ({ workloads, runs, warmup }) => {
    await load();
    return workloadTimes(workloads, runs, warmup, runOnce);
  },

  bridge: async ({ n, runs }) => {
    await load();
    const all = {};
    for (const [how, install] of Object.entries(bridges)) {
      all[how] = await bridgeTime(n, runs, (k) => runOnce(bridgeStep(k), 128, (ctx) => install(ctx, answer)));
    }
    const [how, us] = Object.entries(all).sort((a, b) => a[1] - b[1])[0];
    return { us_per_roundtrip: us, how, all };
  },

  memory: async ({ instances }) => {
    await load();
    const keep = [];
    const make = async () => {
      const iso = new ivm.Isolate({ memoryLimit: 128 });
      const ctx = await iso.createContext();
      await bridges["Reference.applySyncPromise"](ctx, answer);
      await ctx.eval("1 + 1");
      return iso;
    };
    // The marginal cost: the RSS increase from the first half of the
    // isolates to all of them, so that one-time costs do not count.
    const half = Math.max(1, Math.floor(instances / 2));
    for (let i = 0; i < half; i++) keep.push(await make());
    const before = await rss();
    for (let i = half; i < instances; i++) keep.push(await make());
    const after = await rss();
    for (const iso of keep) iso.dispose();
    return { bytes_per_instance: (after - before) / (instances - half), instances, how: `RSS increase from ${half} to ${instances} idle Isolates + Contexts (bridge installed, one evaluation done), per isolate` };
  },
};

main("isolated-vm", measures, async () => { throw new Error("no worker-thread measures"); });
