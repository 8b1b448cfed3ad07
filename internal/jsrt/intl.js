// Stepbox guest Intl (ECMA-402): the JavaScript surface of internal/intl.
// The host evaluates this part (intl.go, loadIntl) after registering the
// host functions it reads (and deletes) from the global object; the
// function it evaluates to installs Intl and the locale methods of Date,
// Number, BigInt and String:
//
//   - DateTimeFormat, NumberFormat, RelativeTimeFormat and ListFormat:
//     the options as ECMA-402 reads them, handed to Go (__sbx_intl_new),
//     which resolves the locale and formats (__sbx_intl_format) from the
//     CLDR tables of internal/intl;
//   - PluralRules: CLDR's cardinal and ordinal rules for every locale
//     golang.org/x/text has (__sbx_intl_plural);
//   - Collator and String.prototype.localeCompare: CLDR collation for the
//     locales golang.org/x/text has (__sbx_intl_compare).
//
// It runs when a step first uses Intl, before the step can see it, and
// keeps what it needs of the built-ins in its closure: the step's later
// changes to them do not reach it.
"use strict";
(function __sbx_intl() {
  const g = globalThis;
  const newOf = g.__sbx_intl_new, formatOf = g.__sbx_intl_format, localesOf = g.__sbx_intl_locales;
  const localeOf = g.__sbx_intl_locale, pluralOf = g.__sbx_intl_plural, compareOf = g.__sbx_intl_compare;
  delete g.__sbx_intl_new;
  delete g.__sbx_intl_format;
  delete g.__sbx_intl_locales;
  delete g.__sbx_intl_locale;
  delete g.__sbx_intl_plural;
  delete g.__sbx_intl_compare;
  const JSONstringify = JSON.stringify, JSONparse = JSON.parse;
  const ObjectDefineProperty = Object.defineProperty, ObjectCtor = Object;
  const StringCtor = String, NumberCtor = Number, BooleanCtor = Boolean;
  const MathAbs = Math.abs, NumberIsFinite = Number.isFinite, MathMax = Math.max;
  const ReflectApply = Reflect.apply;
  const toFixed = Number.prototype.toFixed;
  const BigIntCtor = BigInt, BigIntToString = BigInt.prototype.toString;
  const StringIndexOf = String.prototype.indexOf, StringSlice = String.prototype.slice;
  const StringCharCodeAt = String.prototype.charCodeAt;
  const TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, ErrorCtor = Error;
  const WeakMapCtor = WeakMap, WeakMapGet = WeakMap.prototype.get, WeakMapSet = WeakMap.prototype.set;
  const MapCtor = Map, MapGet = Map.prototype.get, MapSet = Map.prototype.set, MapClear = Map.prototype.clear;
  const MapSize = Object.getOwnPropertyDescriptor(Map.prototype, "size").get;
  const DateNow = Date.now, DateValueOf = Date.prototype.valueOf;
  const NumberValueOf = Number.prototype.valueOf, BigIntValueOf = BigInt.prototype.valueOf;
  const SymbolIterator = Symbol.iterator, SymbolToStringTag = Symbol.toStringTag;
  const errors = { __proto__: null, RangeError: RangeErrorCtor, TypeError: TypeErrorCtor };

  function define(o, name, value) {
    ObjectDefineProperty(o, name, { __proto__: null, value: value, writable: true, enumerable: false, configurable: true });
  }
  function tag(o, t) {
    ObjectDefineProperty(o, SymbolToStringTag, { __proto__: null, value: t, writable: false, enumerable: false, configurable: true });
  }
  // noLength gives a function ECMA-402's length of 0.
  function noLength(f) {
    ObjectDefineProperty(f, "length", { __proto__: null, value: 0, writable: false, enumerable: false, configurable: true });
    return f;
  }
  function slots() {
    const m = new WeakMapCtor();
    return {
      get: function (o) { return o !== null && (typeof o === "object" || typeof o === "function") ? ReflectApply(WeakMapGet, m, [o]) : undefined; },
      set: function (o, v) { ReflectApply(WeakMapSet, m, [o, v]); },
    };
  }
  function slotOf(table, o, name) {
    const s = table.get(o);
    if (s === undefined) throw new TypeErrorCtor("Method Intl." + name + ".prototype method called on incompatible receiver " + StringCtor(o));
    return s;
  }
  // A host function answers with a string that starts with \x01 for an
  // error: \x01 + the error's name + \x01 + its message.
  function checked(r) {
    if (typeof r === "string" && r[0] === "\u0001") {
      const i = ReflectApply(StringIndexOf, r, ["\u0001", 1]);
      const C = errors[ReflectApply(StringSlice, r, [1, i])];
      throw new (C === undefined ? ErrorCtor : C)(ReflectApply(StringSlice, r, [i + 1]));
    }
    return r;
  }
  function host(f, args) {
    return checked(ReflectApply(f, undefined, args));
  }
  // formatWith asks the host to format value (and unit) with the formatter of
  // slot s, as a string or (toParts) the JSON of its parts. The host
  // knows a formatter by its id; one it has forgotten (it keeps a bounded
  // number) answers \x02, and is made again from the slot's request.
  function formatWith(s, value, toParts, unit) {
    let r = formatOf(s.id, value, toParts, unit);
    if (r === "\u0002") {
      checked(newOf(s.kind, s.loc, s.opts, s.id));
      r = formatOf(s.id, value, toParts, unit);
    }
    return checked(r);
  }
  // localeList is ECMA-402's CanonicalizeLocaleList's reading of its
  // argument: the tags, canonicalized by the host.
  function localeList(locales) {
    if (locales === undefined) return [];
    if (typeof locales === "string") return [locales];
    const o = ObjectCtor(locales), n = o.length >>> 0, r = [];
    for (let i = 0; i < n; i++) {
      if (i in o) {
        const v = o[i];
        if (typeof v !== "string" && (v === null || typeof v !== "object")) throw new TypeErrorCtor("Language ID should be string or object.");
        r[r.length] = StringCtor(v);
      }
    }
    return r;
  }
  function canonical(locales) {
    return JSONparse(host(localesOf, ["", JSONstringify(localeList(locales))]));
  }
  function supportedLocalesOf(kind) {
    return noLengthOne(function supportedLocalesOf(locales) {
      const opts = arguments[1];
      if (opts !== undefined) getOption(options(opts), "localeMatcher", ["lookup", "best fit"], "best fit");
      return JSONparse(host(localesOf, [kind, JSONstringify(localeList(locales))]));
    });
  }
  // copy is a new array of a's items (Array.from would iterate).
  function copy(a) {
    const out = [];
    for (let i = 0; i < a.length; i++) out[i] = a[i];
    return out;
  }
  function noLengthOne(f) {
    ObjectDefineProperty(f, "length", { __proto__: null, value: 1, writable: false, enumerable: false, configurable: true });
    return f;
  }
  // options is ECMA-402's CoerceOptionsToObject.
  function options(opts) {
    if (opts === undefined) return { __proto__: null };
    if (opts === null) throw new TypeErrorCtor("Cannot convert undefined or null to object");
    return ObjectCtor(opts);
  }
  // optionsObject is GetOptionsObject: undefined or an object.
  function optionsObject(opts) {
    if (opts === undefined) return { __proto__: null };
    if (opts === null || (typeof opts !== "object" && typeof opts !== "function")) throw new TypeErrorCtor("Options must be an object");
    return opts;
  }
  // getOption is ECMA-402's GetOption for a string (values) or a boolean.
  function getOption(opts, name, values, fallback) {
    const v = opts[name];
    if (v === undefined) return fallback;
    if (values === "boolean") return BooleanCtor(v);
    const s = StringCtor(v);
    for (let i = 0; i < values.length; i++) if (values[i] === s) return s;
    throw new RangeErrorCtor("Value " + s + " out of range for Intl options property " + name);
  }
  function getNumberOption(opts, name, min, max, fallback) {
    const v = opts[name];
    if (v === undefined) return fallback;
    const n = NumberCtor(v);
    if (n !== n || n < min || n > max) throw new RangeErrorCtor(name + " value is out of range.");
    return n - (n % 1);
  }
  // read copies the named options into a plain object for the host: a
  // string option as a string, a number as a number, a boolean as one.
  function read(o, out, names, kind) {
    for (let i = 0; i < names.length; i++) {
      const v = o[names[i]];
      if (v === undefined) continue;
      if (kind === "number") out[names[i]] = NumberCtor(v);
      else if (kind === "boolean") out[names[i]] = BooleanCtor(v);
      else out[names[i]] = StringCtor(v);
    }
  }
  // A formatter keeps its request and its resolved options; the host
  // keeps the formatter itself, by id.
  let nextId = 0;
  function create(kind, locales, request) {
    const loc = JSONstringify(localeList(locales)), opts = JSONstringify(request), id = nextId++;
    const resolved = checked(newOf(kind, loc, opts, id));
    return { kind: kind, loc: loc, opts: opts, id: id, resolved: resolved, bound: undefined };
  }
  function resolvedCopy(s) {
    return JSONparse(s.resolved);
  }

  // ---- DateTimeFormat -------------------------------------------------------
  const dtfSlots = slots();
  const dateComponents = ["weekday", "era", "year", "month", "day", "dayPeriod", "hour", "minute", "second"];
  // dateTimeRequest reads the options of CreateDateTimeFormat, with the
  // defaults that required ("date", "time" or "any") and defaults ("date",
  // "time" or "all") give a toLocale*String method.
  function dateTimeRequest(opts, required, defaults) {
    const o = options(opts), r = { __proto__: null };
    read(o, r, ["localeMatcher", "calendar", "numberingSystem"]);
    read(o, r, ["hour12"], "boolean");
    read(o, r, ["hourCycle", "timeZone"]);
    read(o, r, dateComponents);
    if (o.fractionalSecondDigits !== undefined) r.fractionalSecondDigits = getNumberOption(o, "fractionalSecondDigits", 1, 3, undefined);
    read(o, r, ["timeZoneName", "formatMatcher", "dateStyle", "timeStyle"]);
    if (r.dateStyle !== undefined || r.timeStyle !== undefined) {
      if (required === "date" && r.timeStyle !== undefined) throw new TypeErrorCtor("Invalid option : timeStyle");
      if (required === "time" && r.dateStyle !== undefined) throw new TypeErrorCtor("Invalid option : dateStyle");
      return r;
    }
    let need = true;
    if (required === "date" || required === "any") {
      if (r.weekday !== undefined || r.year !== undefined || r.month !== undefined || r.day !== undefined) need = false;
    }
    if (required === "time" || required === "any") {
      if (r.dayPeriod !== undefined || r.hour !== undefined || r.minute !== undefined || r.second !== undefined ||
        r.fractionalSecondDigits !== undefined) need = false;
    }
    if (need && (defaults === "date" || defaults === "all")) {
      r.year = "numeric"; r.month = "numeric"; r.day = "numeric";
    }
    if (need && (defaults === "time" || defaults === "all")) {
      r.hour = "numeric"; r.minute = "numeric"; r.second = "numeric";
    }
    return r;
  }
  function DateTimeFormat(locales, opts) {
    const s = create("dtf", locales, dateTimeRequest(opts, "any", "date"));
    const self = new.target === undefined ? ObjectCreateDTF() : this;
    dtfSlots.set(self, s);
    return self;
  }
  function ObjectCreateDTF() { return { __proto__: DateTimeFormat.prototype }; }
  function timeValue(date) {
    const t = date === undefined ? DateNow() : NumberCtor(date);
    if (!NumberIsFinite(t) || MathAbs(t) > 8.64e15) throw new RangeErrorCtor("Invalid time value");
    return t;
  }
  ObjectDefineProperty(DateTimeFormat.prototype, "format", {
    __proto__: null, enumerable: false, configurable: true,
    get: function format() {
      const s = slotOf(dtfSlots, this, "DateTimeFormat");
      if (s.bound === undefined) s.bound = function (date) { return formatWith(s, timeValue(date), false); };
      return s.bound;
    },
  });
  define(DateTimeFormat.prototype, "formatToParts", function formatToParts(date) {
    const s = slotOf(dtfSlots, this, "DateTimeFormat");
    return JSONparse(formatWith(s, timeValue(date), true));
  });
  define(DateTimeFormat.prototype, "resolvedOptions", function resolvedOptions() {
    return resolvedCopy(slotOf(dtfSlots, this, "DateTimeFormat"));
  });
  noLength(DateTimeFormat);
  define(DateTimeFormat, "supportedLocalesOf", supportedLocalesOf("dtf"));
  tag(DateTimeFormat.prototype, "Intl.DateTimeFormat");

  // ---- NumberFormat ---------------------------------------------------------
  const nfSlots = slots();
  function numberRequest(opts) {
    const o = options(opts), r = { __proto__: null };
    read(o, r, ["localeMatcher", "numberingSystem", "style", "currency", "currencyDisplay", "currencySign", "unit", "unitDisplay", "notation"]);
    read(o, r, ["minimumIntegerDigits", "minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits", "roundingIncrement"], "number");
    read(o, r, ["roundingMode", "roundingPriority", "trailingZeroDisplay", "compactDisplay"]);
    const ug = o.useGrouping;
    if (ug !== undefined) r.useGrouping = ug === true ? true : !ug ? false : StringCtor(ug);
    read(o, r, ["signDisplay"]);
    return r;
  }
  function NumberFormat(locales, opts) {
    const s = create("nf", locales, numberRequest(opts));
    const self = new.target === undefined ? { __proto__: NumberFormat.prototype } : this;
    nfSlots.set(self, s);
    return self;
  }
  // numberValue keeps a BigInt (its digits and "n") or a decimal string
  // exact: the host reads its digits. Another string is a Number ("0x10",
  // "Infinity").
  function numberValue(v) {
    if (typeof v === "bigint") return ReflectApply(BigIntToString, v, []) + "n";
    if (typeof v === "string") return decimalString(v) ? v : NumberCtor(v);
    return NumberCtor(v);
  }
  // decimalString reports whether s is digits with an optional sign,
  // point and exponent, between spaces.
  function decimalString(s) {
    let digits = false;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c >= "0" && c <= "9") digits = true;
      else if (c !== "." && c !== "e" && c !== "E" && c !== "+" && c !== "-" && c !== " ") return false;
    }
    return digits;
  }
  ObjectDefineProperty(NumberFormat.prototype, "format", {
    __proto__: null, enumerable: false, configurable: true,
    get: function format() {
      const s = slotOf(nfSlots, this, "NumberFormat");
      if (s.bound === undefined) s.bound = function (value) { return formatWith(s, numberValue(value), false); };
      return s.bound;
    },
  });
  define(NumberFormat.prototype, "formatToParts", function formatToParts(value) {
    const s = slotOf(nfSlots, this, "NumberFormat");
    return JSONparse(formatWith(s, numberValue(value), true));
  });
  define(NumberFormat.prototype, "resolvedOptions", function resolvedOptions() {
    return resolvedCopy(slotOf(nfSlots, this, "NumberFormat"));
  });
  noLength(NumberFormat);
  define(NumberFormat, "supportedLocalesOf", supportedLocalesOf("nf"));
  tag(NumberFormat.prototype, "Intl.NumberFormat");

  // ---- RelativeTimeFormat ---------------------------------------------------
  const rtfSlots = slots();
  function RelativeTimeFormat(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.RelativeTimeFormat requires 'new'");
    const o = options(opts), r = { __proto__: null };
    read(o, r, ["localeMatcher", "numberingSystem", "style", "numeric"]);
    rtfSlots.set(this, create("rtf", locales, r));
  }
  define(RelativeTimeFormat.prototype, "format", function format(value, unit) {
    const s = slotOf(rtfSlots, this, "RelativeTimeFormat");
    return formatWith(s, NumberCtor(value), false, StringCtor(unit));
  });
  define(RelativeTimeFormat.prototype, "formatToParts", function formatToParts(value, unit) {
    const s = slotOf(rtfSlots, this, "RelativeTimeFormat");
    return JSONparse(formatWith(s, NumberCtor(value), true, StringCtor(unit)));
  });
  define(RelativeTimeFormat.prototype, "resolvedOptions", function resolvedOptions() {
    return resolvedCopy(slotOf(rtfSlots, this, "RelativeTimeFormat"));
  });
  noLength(RelativeTimeFormat);
  define(RelativeTimeFormat, "supportedLocalesOf", supportedLocalesOf("rtf"));
  tag(RelativeTimeFormat.prototype, "Intl.RelativeTimeFormat");

  // ---- ListFormat -----------------------------------------------------------
  const lfSlots = slots();
  function ListFormat(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.ListFormat requires 'new'");
    const o = optionsObject(opts), r = { __proto__: null };
    read(o, r, ["localeMatcher", "type", "style"]);
    lfSlots.set(this, create("lf", locales, r));
  }
  // listItems is ECMA-402's StringListFromIterable.
  function listItems(list) {
    const items = [];
    if (list === undefined) return items;
    const it = list[SymbolIterator]();
    const next = it.next;
    for (;;) {
      const r = ReflectApply(next, it, []);
      if (r.done) break;
      const v = r.value;
      if (typeof v !== "string") {
        const ret = it.return;
        if (typeof ret === "function") ReflectApply(ret, it, []);
        throw new TypeErrorCtor("Iterable yielded " + (typeof v === "symbol" ? "a symbol" : StringCtor(v)) + " which is not a string");
      }
      items[items.length] = v;
    }
    return items;
  }
  define(ListFormat.prototype, "format", function format(list) {
    const s = slotOf(lfSlots, this, "ListFormat");
    return formatWith(s, JSONstringify(listItems(list)), false);
  });
  define(ListFormat.prototype, "formatToParts", function formatToParts(list) {
    const s = slotOf(lfSlots, this, "ListFormat");
    return JSONparse(formatWith(s, JSONstringify(listItems(list)), true));
  });
  define(ListFormat.prototype, "resolvedOptions", function resolvedOptions() {
    return resolvedCopy(slotOf(lfSlots, this, "ListFormat"));
  });
  noLength(ListFormat);
  define(ListFormat, "supportedLocalesOf", supportedLocalesOf("lf"));
  tag(ListFormat.prototype, "Intl.ListFormat");

  // ---- PluralRules ----------------------------------------------------------
  const pluralSlots = slots();
  function PluralRules(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.PluralRules requires 'new'");
    const list = canonical(locales);
    const o = options(opts);
    getOption(o, "localeMatcher", ["lookup", "best fit"], "best fit");
    const type = getOption(o, "type", ["cardinal", "ordinal"], "cardinal");
    const minInt = getNumberOption(o, "minimumIntegerDigits", 1, 21, 1);
    const minFrac = getNumberOption(o, "minimumFractionDigits", 0, 100, 0);
    const maxFrac = getNumberOption(o, "maximumFractionDigits", minFrac, 100, MathMax(minFrac, 3));
    const locale = localeOf("plural", JSONstringify(list));
    pluralSlots.set(this, {
      locale: locale, type: type, minInt: minInt, minFrac: minFrac, maxFrac: maxFrac,
      categories: JSONparse(pluralOf(locale, type, "")),
    });
  }
  // decimal is n as the plural rules see it: its absolute value rounded to
  // at most maxFrac places, trailing zeros dropped down to minFrac.
  function decimal(n, minFrac, maxFrac) {
    const a = MathAbs(n);
    let s;
    if (a >= 1e21) s = ReflectApply(BigIntToString, BigIntCtor(a), []);
    else s = ReflectApply(toFixed, a, [maxFrac]);
    const dot = ReflectApply(StringIndexOf, s, ["."]);
    if (dot < 0) return s;
    let end = s.length;
    while (end > dot + 1 + minFrac && s[end - 1] === "0") end--;
    if (end === dot + 1) end = dot;
    return ReflectApply(StringSlice, s, [0, end]);
  }
  define(PluralRules.prototype, "select", function select(n) {
    const s = slotOf(pluralSlots, this, "PluralRules");
    const v = NumberCtor(n);
    if (!NumberIsFinite(v)) return "other";
    return pluralOf(s.locale, s.type, decimal(v, s.minFrac, s.maxFrac));
  });
  define(PluralRules.prototype, "resolvedOptions", function resolvedOptions() {
    const s = slotOf(pluralSlots, this, "PluralRules");
    return {
      locale: s.locale, type: s.type, minimumIntegerDigits: s.minInt,
      minimumFractionDigits: s.minFrac, maximumFractionDigits: s.maxFrac,
      pluralCategories: copy(s.categories),
    };
  });
  noLength(PluralRules);
  define(PluralRules, "supportedLocalesOf", supportedLocalesOf("plural"));
  tag(PluralRules.prototype, "Intl.PluralRules");

  // ---- Collator -------------------------------------------------------------
  const collatorSlots = slots();
  function Collator(locales, opts) {
    if (new.target === undefined) return new Collator(locales, opts);
    const list = canonical(locales);
    const o = options(opts);
    const usage = getOption(o, "usage", ["sort", "search"], "sort");
    getOption(o, "localeMatcher", ["lookup", "best fit"], "best fit");
    const numeric = getOption(o, "numeric", "boolean", false);
    const caseFirst = getOption(o, "caseFirst", ["upper", "lower", "false"], "false");
    const sensitivity = getOption(o, "sensitivity", ["base", "accent", "case", "variant"], "variant");
    const ignorePunctuation = getOption(o, "ignorePunctuation", "boolean", false);
    collatorSlots.set(this, {
      locale: localeOf("collator", JSONstringify(list)), usage: usage, sensitivity: sensitivity,
      ignorePunctuation: ignorePunctuation, numeric: numeric, caseFirst: caseFirst, bound: undefined,
    });
  }
  function compareWith(s, a, b) {
    return compareOf(s.locale, s.sensitivity, s.numeric, StringCtor(a), StringCtor(b));
  }
  ObjectDefineProperty(Collator.prototype, "compare", {
    __proto__: null, enumerable: false, configurable: true,
    get: function compare() {
      const s = slotOf(collatorSlots, this, "Collator");
      if (s.bound === undefined) s.bound = function (a, b) { return compareWith(s, a, b); };
      return s.bound;
    },
  });
  define(Collator.prototype, "resolvedOptions", function resolvedOptions() {
    const s = slotOf(collatorSlots, this, "Collator");
    return {
      locale: s.locale, usage: s.usage, sensitivity: s.sensitivity, ignorePunctuation: s.ignorePunctuation,
      collation: "default", numeric: s.numeric, caseFirst: s.caseFirst,
    };
  });
  noLength(Collator);
  define(Collator, "supportedLocalesOf", supportedLocalesOf("collator"));
  tag(Collator.prototype, "Intl.Collator");

  // ---- Intl and the locale methods ------------------------------------------
  const Intl = {};
  tag(Intl, "Intl");
  define(Intl, "getCanonicalLocales", function getCanonicalLocales(locales) { return canonical(locales); });
  define(Intl, "supportedValuesOf", function supportedValuesOf(key) {
    return JSONparse(host(localesOf, ["values", `${key}`])); // ToString: a Symbol throws
  });
  define(Intl, "DateTimeFormat", DateTimeFormat);
  define(Intl, "NumberFormat", NumberFormat);
  define(Intl, "RelativeTimeFormat", RelativeTimeFormat);
  define(Intl, "ListFormat", ListFormat);
  define(Intl, "PluralRules", PluralRules);
  define(Intl, "Collator", Collator);

  // The locale methods make a formatter per call, as ECMA-402 says; the
  // common calls (no options, one locale or none) reuse one.
  const cache = new MapCtor();
  function cached(key, make) {
    if (key === undefined) return make();
    let s = ReflectApply(MapGet, cache, [key]);
    if (s === undefined) {
      if (ReflectApply(MapSize, cache, []) >= 64) ReflectApply(MapClear, cache, []);
      s = make();
      ReflectApply(MapSet, cache, [key, s]);
    }
    return s;
  }
  function cacheKey(kind, locales, opts) {
    if (opts !== undefined || (locales !== undefined && typeof locales !== "string")) return undefined;
    return kind + " " + (locales === undefined ? "" : locales);
  }
  function dateMethod(required, defaults) {
    return noLength(function (locales, opts) {
      const t = ReflectApply(DateValueOf, this, []);
      if (t !== t) return "Invalid Date";
      const s = cached(cacheKey(required, locales, opts), function () {
        return create("dtf", locales, dateTimeRequest(opts, required, defaults));
      });
      return formatWith(s, t, false);
    });
  }
  const dateMethods = {
    toLocaleString: dateMethod("any", "all"),
    toLocaleDateString: dateMethod("date", "date"),
    toLocaleTimeString: dateMethod("time", "time"),
  };
  function numberMethod(valueOf) {
    return noLength(function toLocaleString(locales, opts) {
      const v = ReflectApply(valueOf, this, []);
      const s = cached(cacheKey("number", locales, opts), function () { return create("nf", locales, numberRequest(opts)); });
      return formatWith(s, numberValue(v), false);
    });
  }
  const DatePrototype = Date.prototype, dateNames = ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"];
  for (let i = 0; i < dateNames.length; i++) {
    const f = dateMethods[dateNames[i]];
    ObjectDefineProperty(f, "name", { __proto__: null, value: dateNames[i], configurable: true });
    define(DatePrototype, dateNames[i], f);
  }
  define(Number.prototype, "toLocaleString", numberMethod(NumberValueOf));
  define(BigInt.prototype, "toLocaleString", numberMethod(BigIntValueOf));

  const defaultCollator = { __proto__: null };
  define(String.prototype, "localeCompare", function localeCompare(that) {
    if (this === undefined || this === null) throw new TypeErrorCtor("String.prototype.localeCompare called on null or undefined");
    const a = StringCtor(this), b = StringCtor(that);
    const locales = arguments[1], opts = arguments[2];
    if (opts === undefined && (locales === undefined || typeof locales === "string")) {
      const key = locales === undefined ? "" : locales;
      let s = defaultCollator[key];
      if (s === undefined) s = defaultCollator[key] = slotOf(collatorSlots, new Collator(locales), "Collator");
      return compareWith(s, a, b);
    }
    return compareWith(slotOf(collatorSlots, new Collator(locales, opts), "Collator"), a, b);
  });

  define(g, "Intl", Intl);
})
