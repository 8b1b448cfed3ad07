// Stepbox guest bootstrap, a part: FormData, loaded when a step first
// reads it. Its Blob values are blob.js's, as FormData finds them: no
// Blob exists before that part is loaded. Library code the step uses
// (doc.go, "The web platform's globals").
"use strict";
(function __sbx_formPart(bridge) {
  const { ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor, SymbolIterator, loadedPart } = bridge;

  function __sbx_formValue(value, filename, n) {
    const blob = loadedPart("blob");
    if (blob !== undefined && value instanceof blob.Blob) {
      if (value instanceof blob.File && filename === undefined) return value;
      return new blob.File([value], filename === undefined ? "blob" : StringCtor(filename), { type: value.type });
    }
    if (n > 2) throw new TypeErrorCtor("FormData: a filename is only for a Blob value");
    return StringCtor(value);
  }
  class FormData {
    #entries = [];
    constructor(form = undefined) {
      if (form !== undefined) throw new TypeErrorCtor("FormData: there is no HTML form in a step");
    }
    append(name, value, filename = undefined) { this.#entries.push([StringCtor(name), __sbx_formValue(value, filename, arguments.length)]); }
    set(name, value, filename = undefined) {
      name = StringCtor(name);
      const v = __sbx_formValue(value, filename, arguments.length);
      const i = this.#entries.findIndex((e) => e[0] === name);
      if (i < 0) { this.#entries.push([name, v]); return; }
      this.#entries[i] = [name, v];
      this.#entries = this.#entries.filter((e, j) => j <= i || e[0] !== name);
    }
    get(name) { name = StringCtor(name); const e = this.#entries.find((e) => e[0] === name); return e === undefined ? null : e[1]; }
    getAll(name) { name = StringCtor(name); return this.#entries.filter((e) => e[0] === name).map((e) => e[1]); }
    has(name) { name = StringCtor(name); return this.#entries.some((e) => e[0] === name); }
    delete(name) { name = StringCtor(name); this.#entries = this.#entries.filter((e) => e[0] !== name); }
    forEach(fn, thisArg = undefined) {
      for (let i = 0; i < this.#entries.length; i++) ReflectApply(fn, thisArg, [this.#entries[i][1], this.#entries[i][0], this]);
    }
    *entries() { for (let i = 0; i < this.#entries.length; i++) yield [this.#entries[i][0], this.#entries[i][1]]; }
    *keys() { for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][0]; }
    *values() { for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][1]; }
    [SymbolIterator]() { return this.entries(); }
  }
  Object.defineProperty(FormData.prototype, Symbol.toStringTag, { value: "FormData", configurable: true });

  return ObjectFreeze({ __proto__: null, FormData });
})
