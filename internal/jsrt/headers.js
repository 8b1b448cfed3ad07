// Stepbox guest bootstrap, a part: Headers, loaded when a step first reads
// it or fetch, Response or Request loads. Bridge code, as fetch.js is: it
// follows bootstrap.js's rules (its header) and uses only the built-ins the
// boot captured, which bridge and inner hand it.
"use strict";
(function __sbx_headersPart(bridge, inner) {
  const {
    ReflectApply, ObjectFreeze, ArrayIsArray, StringCtor, TypeErrorCtor, SymbolIterator, __sbx_list, __sbx_is,
  } = bridge;
  const {
    ObjectEntries, ObjectSetPrototypeOf, StringToLowerCase, MapSize, MapForEach,
  } = inner;

  function __sbx_lower(s) { return ReflectApply(StringToLowerCase, StringCtor(s), []); }

  let headerPairs; // (Headers) -> its pairs, for a fetch request's JSON

  class Headers {
    #list = __sbx_list(); // [lower-case name, value] pairs
    constructor(init) {
      if (init === undefined || init === null) return;
      if (typeof init !== "object" && typeof init !== "function") {
        throw new TypeErrorCtor("Headers: init must be an object, an array of [name, value] pairs or a Headers");
      }
      if (#list in init) {
        const l = init.#list;
        for (let i = 0; i < l.length; i++) this.#append(l[i][0], l[i][1]);
        return;
      }
      if (ArrayIsArray(init)) {
        for (let i = 0; i < init.length; i++) {
          const pair = init[i];
          this.#append(pair[0], pair[1]);
        }
        return;
      }
      if (__sbx_is(MapSize, init)) {
        const self = this;
        ReflectApply(MapForEach, init, [function __sbx_header(value, name) { self.#append(name, value); }]);
        return;
      }
      const iterate = init[SymbolIterator];
      if (typeof iterate === "function") {
        // Another iterable of the step's: its own iterator.
        const it = ReflectApply(iterate, init, []);
        for (let r = it.next(); !r.done; r = it.next()) this.#append(r.value[0], r.value[1]);
        return;
      }
      const entries = ObjectEntries(init);
      for (let i = 0; i < entries.length; i++) this.#append(entries[i][0], entries[i][1]);
    }
    #append(name, value) {
      const l = this.#list;
      l[l.length] = [__sbx_lower(name), StringCtor(value)];
    }
    #remove(n) {
      const l = this.#list;
      const keep = __sbx_list();
      for (let i = 0; i < l.length; i++) if (l[i][0] !== n) keep[keep.length] = l[i];
      this.#list = keep;
    }
    #get(n) {
      const l = this.#list;
      let v = null;
      for (let i = 0; i < l.length; i++) if (l[i][0] === n) v = v === null ? l[i][1] : v + ", " + l[i][1];
      return v;
    }
    // #entries are the headers as fetch shows them: one per name, sorted,
    // repeated values joined.
    #entries() {
      const l = this.#list;
      const names = __sbx_list();
      for (let i = 0; i < l.length; i++) {
        const n = l[i][0];
        let j = 0;
        while (j < names.length && names[j] !== n) j++;
        if (j === names.length) names[j] = n;
      }
      for (let i = 1; i < names.length; i++) {
        const n = names[i];
        let j = i - 1;
        for (; j >= 0 && names[j] > n; j--) names[j + 1] = names[j];
        names[j + 1] = n;
      }
      const out = __sbx_list();
      for (let i = 0; i < names.length; i++) out[i] = [names[i], this.#get(names[i])];
      return out;
    }
    static {
      headerPairs = function __sbx_headerPairs(h) {
        const l = h.#list;
        const out = __sbx_list();
        for (let i = 0; i < l.length; i++) out[i] = ObjectSetPrototypeOf([l[i][0], l[i][1]], null);
        return out;
      };
    }
    append(name, value) { this.#append(name, value); }
    set(name, value) {
      const n = __sbx_lower(name);
      this.#remove(n);
      const l = this.#list;
      l[l.length] = [n, StringCtor(value)];
    }
    delete(name) { this.#remove(__sbx_lower(name)); }
    get(name) { return this.#get(__sbx_lower(name)); }
    has(name) { return this.#get(__sbx_lower(name)) !== null; }
    forEach(fn, thisArg) {
      const e = this.#entries();
      for (let i = 0; i < e.length; i++) ReflectApply(fn, thisArg, [e[i][1], e[i][0], this]);
    }
    entries() { return __sbx_iterate(this.#entries(), 0); }
    keys() { return __sbx_iterate(this.#entries(), 1); }
    values() { return __sbx_iterate(this.#entries(), 2); }
    [SymbolIterator]() { return __sbx_iterate(this.#entries(), 0); }
  }

  // __sbx_iterate walks a snapshot of #entries: pairs (kind 0), names (1)
  // or values (2). Its body runs in the step's calls of next, and reads
  // nothing.
  function* __sbx_iterate(list, kind) {
    for (let i = 0; i < list.length; i++) yield kind === 0 ? list[i] : list[i][kind - 1];
  }

  return ObjectFreeze({
    __proto__: null,
    Headers,
    // for fetch.js and request.js, not a global
    __sbx_headerPairs: headerPairs,
  });
})
