// Stepbox guest bootstrap, a part: AbortController and AbortSignal (the
// signal fetch takes), loaded when a step first reads one of them; its
// signals are EventTargets, so events.js loads with it. Library code the
// step uses (doc.go, "The web platform's globals"), but for what fetch
// reads of a signal (__sbx_signalInfo, __sbx_onAbort), which follows the
// bridge's rules (bootstrap.js's header).
"use strict";
(function __sbx_abortPart(bridge) {
  const { ReflectApply, ObjectFreeze, TypeErrorCtor, __sbx_list, setTimer } = bridge;
  const { Event, EventTarget } = bridge.part("events");

  function __sbx_dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }

  let signalAbort, signalInfo, onAbort;
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #timeoutMs = undefined; #onabort = null; #dependents = null;
    #hooks = null; // the bridge's functions to call on abort (fetch's), a list of its own
    constructor(key) {
      if (key !== NEW_SIGNAL) throw new TypeErrorCtor("Illegal constructor");
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    get onabort() { return this.#onabort; }
    set onabort(fn) {
      if (this.#onabort !== null) this.removeEventListener("abort", this.#onabort);
      this.#onabort = typeof fn === "function" ? fn : null;
      if (this.#onabort !== null) this.addEventListener("abort", this.#onabort);
    }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    static abort(reason = undefined) {
      const s = new AbortSignal(NEW_SIGNAL);
      s.#aborted = true;
      s.#reason = reason === undefined ? __sbx_dom("This operation was aborted", "AbortError") : reason;
      return s;
    }
    static timeout(ms) {
      ms = +ms;
      if (!(ms >= 0) || ms > 9007199254740991) throw new TypeErrorCtor("AbortSignal.timeout: the delay must be a non-negative number");
      const s = new AbortSignal(NEW_SIGNAL);
      s.#timeoutMs = ms;
      setTimer(() => signalAbort(s, __sbx_dom("The operation was aborted due to timeout", "TimeoutError")), ms, [], false);
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(NEW_SIGNAL);
      const list = [];
      for (const x of signals) {
        if (!(x instanceof AbortSignal)) throw new TypeErrorCtor("AbortSignal.any: every item must be an AbortSignal");
        list.push(x);
      }
      for (let i = 0; i < list.length; i++) {
        if (list[i].#aborted) { s.#aborted = true; s.#reason = list[i].#reason; return s; }
      }
      for (let i = 0; i < list.length; i++) {
        if (list[i].#dependents === null) list[i].#dependents = [];
        list[i].#dependents.push(s);
        if (list[i].#timeoutMs !== undefined && (s.#timeoutMs === undefined || list[i].#timeoutMs < s.#timeoutMs)) s.#timeoutMs = list[i].#timeoutMs;
      }
      return s;
    }
    static {
      signalAbort = function __sbx_signalAbort(s, reason) {
        if (s.#aborted) return;
        s.#aborted = true;
        s.#reason = reason;
        const hooks = s.#hooks;
        s.#hooks = null;
        if (hooks !== null) for (let i = 0; i < hooks.length; i++) ReflectApply(hooks[i], undefined, [reason]);
        s.dispatchEvent(new Event("abort"));
        const deps = s.#dependents;
        s.#dependents = null;
        if (deps !== null) for (let i = 0; i < deps.length; i++) __sbx_signalAbort(deps[i], reason);
      };
      // signalInfo tells fetch a signal's state: undefined for what is not
      // an AbortSignal.
      signalInfo = function __sbx_signalInfo(s) {
        if (s === null || typeof s !== "object" || !(#aborted in s)) return undefined;
        return { __proto__: null, aborted: s.#aborted, reason: s.#reason, timeoutMs: s.#timeoutMs };
      };
      // onAbort has fn called with the reason when s aborts, before its
      // listeners, touching nothing the step can reach.
      onAbort = function __sbx_onAbort(s, fn) {
        if (s.#hooks === null) s.#hooks = __sbx_list();
        s.#hooks[s.#hooks.length] = fn;
      };
    }
  }
  const NEW_SIGNAL = ObjectFreeze({ __proto__: null });
  Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: "AbortSignal", configurable: true });

  class AbortController {
    #signal = new AbortSignal(NEW_SIGNAL);
    get signal() { return this.#signal; }
    abort(reason = undefined) {
      signalAbort(this.#signal, reason === undefined ? __sbx_dom("This operation was aborted", "AbortError") : reason);
    }
  }
  Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: "AbortController", configurable: true });

  return ObjectFreeze({
    __proto__: null,
    AbortController, AbortSignal,
    // for fetch, not globals
    __sbx_signalInfo: signalInfo, __sbx_onAbort: onAbort,
  });
})
