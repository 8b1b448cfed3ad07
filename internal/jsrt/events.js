// Stepbox guest bootstrap, a part: Event and EventTarget, loaded when a
// step first reads one of them or AbortSignal (abort.js, whose signals are
// EventTargets) loads. Library code the step uses (doc.go, "The web
// platform's globals"); the one DOMException it throws is dom.js's.
"use strict";
(function __sbx_eventsPart(bridge) {
  const { host, ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor } = bridge;
  const SymbolToStringTag = Symbol.toStringTag;

  function __sbx_setTag(C, name) {
    Object.defineProperty(C.prototype, SymbolToStringTag, { value: name, configurable: true });
  }
  function __sbx_dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }

  let eventSetTarget;
  class Event {
    #type; #bubbles; #cancelable; #composed; #canceled = false; #stopped = false;
    #target = null; #current = null; #timeStamp; #dispatching = false;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("Event: the type argument is required");
      this.#type = StringCtor(type);
      this.#bubbles = !!(init && init.bubbles);
      this.#cancelable = !!(init && init.cancelable);
      this.#composed = !!(init && init.composed);
      this.#timeStamp = host("web", "now"); // performance.now()
    }
    get type() { return this.#type; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get composed() { return this.#composed; }
    get defaultPrevented() { return this.#canceled; }
    get target() { return this.#target; }
    get srcElement() { return this.#target; }
    get currentTarget() { return this.#current; }
    get eventPhase() { return this.#current === null ? 0 : 2; }
    get timeStamp() { return this.#timeStamp; }
    get isTrusted() { return false; }
    get returnValue() { return !this.#canceled; }
    get cancelBubble() { return this.#stopped; }
    set cancelBubble(v) { if (v) this.#stopped = true; }
    composedPath() { return this.#current === null ? [] : [this.#current]; }
    preventDefault() { if (this.#cancelable) this.#canceled = true; }
    stopPropagation() { this.#stopped = true; }
    stopImmediatePropagation() { this.#stopped = true; }
    static {
      eventSetTarget = function __sbx_eventState(e, target, current, dispatching) {
        if (dispatching === undefined) return [e.#dispatching, e.#stopped];
        e.#target = target; e.#current = current; e.#dispatching = dispatching;
        if (!dispatching) e.#stopped = false;
        return undefined;
      };
    }
  }
  Event.NONE = 0; Event.CAPTURING_PHASE = 1; Event.AT_TARGET = 2; Event.BUBBLING_PHASE = 3;
  __sbx_setTag(Event, "Event");

  class EventTarget {
    #listeners = new Map(); // type -> [{ fn, capture, once, removed }]
    addEventListener(type, listener, options = undefined) {
      if (listener === null || listener === undefined) return;
      type = StringCtor(type);
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      const once = !!(options && typeof options === "object" && options.once);
      const signal = options && typeof options === "object" ? options.signal : undefined;
      if (signal !== undefined && signal.aborted) return;
      let list = this.#listeners.get(type);
      if (list === undefined) this.#listeners.set(type, list = []);
      for (let i = 0; i < list.length; i++) if (list[i].fn === listener && list[i].capture === capture) return;
      const entry = { fn: listener, capture, once, removed: false };
      list.push(entry);
      if (signal !== undefined) signal.addEventListener("abort", () => this.removeEventListener(type, listener, { capture }));
    }
    removeEventListener(type, listener, options = undefined) {
      const list = this.#listeners.get(StringCtor(type));
      if (list === undefined) return;
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      for (let i = 0; i < list.length; i++) {
        if (list[i].fn === listener && list[i].capture === capture) { list[i].removed = true; list.splice(i, 1); return; }
      }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeErrorCtor("EventTarget.dispatchEvent: the argument must be an Event");
      if (eventSetTarget(event)[0]) throw __sbx_dom("The event is already being dispatched.", "InvalidStateError");
      eventSetTarget(event, this, this, true);
      try {
        const list = (this.#listeners.get(event.type) || []).slice();
        for (let i = 0; i < list.length; i++) {
          const l = list[i];
          if (l.removed) continue;
          if (l.once) this.removeEventListener(event.type, l.fn, { capture: l.capture });
          __sbx_invoke(l.fn, this, event);
          if (eventSetTarget(event)[1]) break;
        }
      } finally {
        eventSetTarget(event, event.target, null, false);
      }
      return !event.defaultPrevented;
    }
  }
  __sbx_setTag(EventTarget, "EventTarget");
  // A listener that throws does not stop the dispatch: its exception is
  // reported (the console, as Node's process does on an uncaught one) and
  // the other listeners run.
  function __sbx_invoke(fn, target, event) {
    try {
      if (typeof fn === "function") ReflectApply(fn, target, [event]);
      else if (fn !== null && typeof fn === "object" && typeof fn.handleEvent === "function") fn.handleEvent(event);
    } catch (e) {
      queueMicrotask(() => { throw e; });
    }
  }

  return ObjectFreeze({ __proto__: null, Event, EventTarget });
})
