// Stepbox guest Intl, the part of it modernc.org/quickjs/intl does not
// have. The host evaluates this part (intl.go, loadIntl) after installing
// that package's Intl (DateTimeFormat, NumberFormat, getCanonicalLocales
// and the toLocale*String methods of Date, Number and BigInt); the
// function it evaluates to adds to that Intl:
//
//   - PluralRules: CLDR's cardinal and ordinal rules for every locale
//     golang.org/x/text has (__sbx_intl_plural);
//   - Collator and String.prototype.localeCompare: CLDR collation for the
//     locales golang.org/x/text has (__sbx_intl_compare);
//   - ListFormat and RelativeTimeFormat: English.
//
// It runs when a step first uses Intl, before the step can see it, and
// keeps what it needs of the built-ins in its closure: the step's later
// changes to them do not reach it.
"use strict";
(function __sbx_intl() {
  const g = globalThis;
  const localeOf = g.__sbx_intl_locale, pluralOf = g.__sbx_intl_plural, compareOf = g.__sbx_intl_compare;
  delete g.__sbx_intl_locale;
  delete g.__sbx_intl_plural;
  delete g.__sbx_intl_compare;
  const Intl = g.Intl;
  const canonical = Intl.getCanonicalLocales;
  const JSONstringify = JSON.stringify, JSONparse = JSON.parse;
  const ObjectDefineProperty = Object.defineProperty, ObjectCtor = Object;
  const StringCtor = String, NumberCtor = Number, ArrayFrom = Array.from;
  const MathAbs = Math.abs, NumberIsFinite = Number.isFinite, MathMax = Math.max;
  const ReflectApply = Reflect.apply;
  const toFixed = Number.prototype.toFixed;
  const BigIntCtor = BigInt, BigIntToString = BigInt.prototype.toString;
  const StringIndexOf = String.prototype.indexOf, StringSlice = String.prototype.slice;
  const TypeErrorCtor = TypeError, RangeErrorCtor = RangeError;

  function define(o, name, value) {
    ObjectDefineProperty(o, name, { value: value, writable: true, enumerable: false, configurable: true });
  }
  function tag(o, t) {
    ObjectDefineProperty(o, Symbol.toStringTag, { value: t, writable: false, enumerable: false, configurable: true });
  }
  function options(opts) {
    if (opts === undefined) return { __proto__: null };
    if (opts === null) throw new TypeErrorCtor("options must be an object");
    return ObjectCtor(opts);
  }
  // getOption is ECMA-402's GetOption for a string (values) or a boolean.
  function getOption(opts, name, values, fallback) {
    const v = opts[name];
    if (v === undefined) return fallback;
    if (values === "boolean") return !!v;
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
  function resolve(kind, locales) {
    return localeOf(kind, JSONstringify(canonical(locales)));
  }
  function supportedLocalesOf(kind) {
    return function supportedLocalesOf(locales) {
      const list = canonical(locales), out = [];
      for (let i = 0; i < list.length; i++) {
        if (localeOf(kind, JSONstringify([list[i]]), true) !== "en-US" || list[i] === "en-US" || list[i] === "en") out[out.length] = list[i];
      }
      return out;
    };
  }

  // ---- PluralRules ---------------------------------------------------------
  const pluralSlots = new WeakMap();
  function pluralSlot(o) {
    const s = o !== null && (typeof o === "object" || typeof o === "function") ? pluralSlots.get(o) : undefined;
    if (s === undefined) throw new TypeErrorCtor("Intl.PluralRules.prototype method called on an incompatible receiver");
    return s;
  }
  function PluralRules(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.PluralRules requires 'new'");
    const o = options(opts);
    const type = getOption(o, "type", ["cardinal", "ordinal"], "cardinal");
    const minInt = getNumberOption(o, "minimumIntegerDigits", 1, 21, 1);
    const minFrac = getNumberOption(o, "minimumFractionDigits", 0, 100, 0);
    const maxFrac = getNumberOption(o, "maximumFractionDigits", minFrac, 100, MathMax(minFrac, 3));
    const locale = resolve("plural", locales);
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
    const s = pluralSlot(this);
    const v = NumberCtor(n);
    if (!NumberIsFinite(v)) return "other";
    return pluralOf(s.locale, s.type, decimal(v, s.minFrac, s.maxFrac));
  });
  define(PluralRules.prototype, "resolvedOptions", function resolvedOptions() {
    const s = pluralSlot(this);
    return {
      locale: s.locale, type: s.type, minimumIntegerDigits: s.minInt,
      minimumFractionDigits: s.minFrac, maximumFractionDigits: s.maxFrac,
      pluralCategories: ArrayFrom(s.categories),
    };
  });
  define(PluralRules, "supportedLocalesOf", supportedLocalesOf("plural"));
  tag(PluralRules.prototype, "Intl.PluralRules");

  // ---- Collator ------------------------------------------------------------
  const collatorSlots = new WeakMap();
  function collatorSlot(o) {
    const s = o !== null && (typeof o === "object" || typeof o === "function") ? collatorSlots.get(o) : undefined;
    if (s === undefined) throw new TypeErrorCtor("Intl.Collator.prototype method called on an incompatible receiver");
    return s;
  }
  function Collator(locales, opts) {
    if (new.target === undefined) return new Collator(locales, opts);
    const o = options(opts);
    const usage = getOption(o, "usage", ["sort", "search"], "sort");
    const numeric = getOption(o, "numeric", "boolean", false);
    const caseFirst = getOption(o, "caseFirst", ["upper", "lower", "false"], "false");
    const sensitivity = getOption(o, "sensitivity", ["base", "accent", "case", "variant"], "variant");
    const ignorePunctuation = getOption(o, "ignorePunctuation", "boolean", false);
    collatorSlots.set(this, {
      locale: resolve("collator", locales), usage: usage, sensitivity: sensitivity,
      ignorePunctuation: ignorePunctuation, numeric: numeric, caseFirst: caseFirst, bound: undefined,
    });
  }
  function compareWith(s, a, b) {
    return compareOf(s.locale, s.sensitivity, s.numeric, StringCtor(a), StringCtor(b));
  }
  ObjectDefineProperty(Collator.prototype, "compare", {
    enumerable: false, configurable: true,
    get: function compare() {
      const s = collatorSlot(this);
      if (s.bound === undefined) s.bound = function (a, b) { return compareWith(s, a, b); };
      return s.bound;
    },
  });
  define(Collator.prototype, "resolvedOptions", function resolvedOptions() {
    const s = collatorSlot(this);
    return {
      locale: s.locale, usage: s.usage, sensitivity: s.sensitivity, ignorePunctuation: s.ignorePunctuation,
      collation: "default", numeric: s.numeric, caseFirst: s.caseFirst,
    };
  });
  define(Collator, "supportedLocalesOf", supportedLocalesOf("collator"));
  tag(Collator.prototype, "Intl.Collator");

  const defaultCollator = { __proto__: null };
  define(String.prototype, "localeCompare", function localeCompare(that) {
    if (this === undefined || this === null) throw new TypeErrorCtor("String.prototype.localeCompare called on null or undefined");
    const a = StringCtor(this), b = StringCtor(that);
    const locales = arguments[1], opts = arguments[2];
    if (opts === undefined && (locales === undefined || typeof locales === "string")) {
      const key = locales === undefined ? "" : locales;
      let s = defaultCollator[key];
      if (s === undefined) s = defaultCollator[key] = collatorSlot(new Collator(locales));
      return compareWith(s, a, b);
    }
    return compareWith(collatorSlot(new Collator(locales, opts)), a, b);
  });

  // ---- ListFormat (English) ------------------------------------------------
  // The patterns of CLDR's en: [the separator of two, of the first ones,
  // before the last one].
  const listPatterns = {
    __proto__: null,
    "conjunction long": [" and ", ", ", ", and "],
    "conjunction short": [" & ", ", ", ", & "],
    "conjunction narrow": [", ", ", ", ", "],
    "disjunction long": [" or ", ", ", ", or "],
    "disjunction short": [" or ", ", ", ", or "],
    "disjunction narrow": [" or ", ", ", ", or "],
    "unit long": [", ", ", ", ", "],
    "unit short": [", ", ", ", ", "],
    "unit narrow": [" ", " ", " "],
  };
  const listSlots = new WeakMap();
  function listSlot(o) {
    const s = o !== null && (typeof o === "object" || typeof o === "function") ? listSlots.get(o) : undefined;
    if (s === undefined) throw new TypeErrorCtor("Intl.ListFormat.prototype method called on an incompatible receiver");
    return s;
  }
  function ListFormat(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.ListFormat requires 'new'");
    const list = canonical(locales);
    const o = options(opts);
    const type = getOption(o, "type", ["conjunction", "disjunction", "unit"], "conjunction");
    const style = getOption(o, "style", ["long", "short", "narrow"], "long");
    listSlots.set(this, { locale: list.length > 0 && (list[0] === "en" || ReflectApply(StringSlice, list[0], [0, 3]) === "en-") ? list[0] : "en-US", type: type, style: style });
  }
  function listParts(s, list) {
    if (list === undefined) list = [];
    const items = [];
    const it = list[Symbol.iterator]();
    for (;;) {
      const r = it.next();
      if (r.done) break;
      if (typeof r.value !== "string") {
        if (typeof it.return === "function") it.return();
        throw new TypeErrorCtor("Iterable yielded " + StringCtor(r.value) + " which is not a string");
      }
      items[items.length] = r.value;
    }
    const p = listPatterns[s.type + " " + s.style], parts = [];
    for (let i = 0; i < items.length; i++) {
      if (i > 0) {
        const sep = items.length === 2 ? p[0] : i === items.length - 1 ? p[2] : p[1];
        parts[parts.length] = { type: "literal", value: sep };
      }
      parts[parts.length] = { type: "element", value: items[i] };
    }
    return parts;
  }
  define(ListFormat.prototype, "format", function format(list) {
    const parts = listParts(listSlot(this), list);
    let out = "";
    for (let i = 0; i < parts.length; i++) out += parts[i].value;
    return out;
  });
  define(ListFormat.prototype, "formatToParts", function formatToParts(list) {
    return listParts(listSlot(this), list);
  });
  define(ListFormat.prototype, "resolvedOptions", function resolvedOptions() {
    const s = listSlot(this);
    return { locale: s.locale, type: s.type, style: s.style };
  });
  define(ListFormat, "supportedLocalesOf", function supportedLocalesOf(locales) {
    const list = canonical(locales), out = [];
    for (let i = 0; i < list.length; i++) if (list[i] === "en" || ReflectApply(StringSlice, list[i], [0, 3]) === "en-") out[out.length] = list[i];
    return out;
  });
  tag(ListFormat.prototype, "Intl.ListFormat");

  // ---- RelativeTimeFormat (English) ----------------------------------------
  // CLDR's en, by unit and style: the unit's name for one and for other
  // (a {0} pattern "in {0} NAME" / "{0} NAME ago", or with a leading "!" a
  // narrow "in {0}NAME"), and numeric "auto"'s words for -1, 0 and 1.
  const rtUnits = {
    __proto__: null,
    second: { long: ["second", "seconds"], short: ["sec.", "sec."], narrow: ["!s", "!s"], auto: ["", "now", ""] },
    minute: { long: ["minute", "minutes"], short: ["min.", "min."], narrow: ["!m", "!m"], auto: ["", "this minute", ""] },
    hour: { long: ["hour", "hours"], short: ["hr.", "hr."], narrow: ["!h", "!h"], auto: ["", "this hour", ""] },
    day: { long: ["day", "days"], short: ["day", "days"], narrow: ["!d", "!d"], auto: ["yesterday", "today", "tomorrow"] },
    week: { long: ["week", "weeks"], short: ["wk.", "wk."], narrow: ["!w", "!w"], auto: ["last week", "this week", "next week"], autoShort: ["last wk.", "this wk.", "next wk."] },
    month: { long: ["month", "months"], short: ["mo.", "mo."], narrow: ["!mo", "!mo"], auto: ["last month", "this month", "next month"], autoShort: ["last mo.", "this mo.", "next mo."] },
    quarter: { long: ["quarter", "quarters"], short: ["qtr.", "qtrs."], narrow: ["!q", "!q"], auto: ["last quarter", "this quarter", "next quarter"], autoShort: ["last qtr.", "this qtr.", "next qtr."] },
    year: { long: ["year", "years"], short: ["yr.", "yr."], narrow: ["!y", "!y"], auto: ["last year", "this year", "next year"], autoShort: ["last yr.", "this yr.", "next yr."] },
  };
  const rtSlots = new WeakMap();
  function rtSlot(o) {
    const s = o !== null && (typeof o === "object" || typeof o === "function") ? rtSlots.get(o) : undefined;
    if (s === undefined) throw new TypeErrorCtor("Intl.RelativeTimeFormat.prototype method called on an incompatible receiver");
    return s;
  }
  function RelativeTimeFormat(locales, opts) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Intl.RelativeTimeFormat requires 'new'");
    const list = canonical(locales);
    const o = options(opts);
    getOption(o, "localeMatcher", ["lookup", "best fit"], "best fit");
    const style = getOption(o, "style", ["long", "short", "narrow"], "long");
    const numeric = getOption(o, "numeric", ["always", "auto"], "always");
    rtSlots.set(this, {
      locale: list.length > 0 && (list[0] === "en" || ReflectApply(StringSlice, list[0], [0, 3]) === "en-") ? list[0] : "en-US",
      style: style, numeric: numeric, nf: new Intl.NumberFormat("en-US"), pr: new PluralRules("en"),
    });
  }
  function rtParts(s, value, unit) {
    let v = NumberCtor(value);
    if (!NumberIsFinite(v)) throw new RangeErrorCtor("Invalid time value: " + StringCtor(value));
    let u = StringCtor(unit);
    if (u.length > 1 && u[u.length - 1] === "s" && rtUnits[ReflectApply(StringSlice, u, [0, -1])] !== undefined) u = ReflectApply(StringSlice, u, [0, -1]);
    const d = rtUnits[u];
    if (d === undefined) throw new RangeErrorCtor("Invalid unit argument for format() '" + StringCtor(unit) + "'");
    const past = v < 0 || (v === 0 && 1 / v < 0);
    if (s.numeric === "auto" && (v === -1 || v === 0 || v === 1)) {
      const words = s.style !== "long" && d.autoShort !== undefined ? d.autoShort : d.auto;
      const w = words[v + 1];
      if (w !== "") return [{ type: "literal", value: w }];
    }
    const abs = MathAbs(v);
    const name = d[s.style][s.pr.select(abs) === "one" ? 0 : 1];
    const narrow = name[0] === "!";
    const unitText = narrow ? ReflectApply(StringSlice, name, [1]) : " " + name;
    const num = s.nf.formatToParts(abs), parts = [];
    if (!past) parts[0] = { type: "literal", value: "in " };
    for (let i = 0; i < num.length; i++) parts[parts.length] = { type: num[i].type, value: num[i].value, unit: u };
    parts[parts.length] = { type: "literal", value: past ? unitText + " ago" : unitText };
    return parts;
  }
  define(RelativeTimeFormat.prototype, "format", function format(value, unit) {
    const parts = rtParts(rtSlot(this), value, unit);
    let out = "";
    for (let i = 0; i < parts.length; i++) out += parts[i].value;
    return out;
  });
  define(RelativeTimeFormat.prototype, "formatToParts", function formatToParts(value, unit) {
    return rtParts(rtSlot(this), value, unit);
  });
  define(RelativeTimeFormat.prototype, "resolvedOptions", function resolvedOptions() {
    const s = rtSlot(this);
    return { locale: s.locale, style: s.style, numeric: s.numeric, numberingSystem: "latn" };
  });
  define(RelativeTimeFormat, "supportedLocalesOf", ListFormat.supportedLocalesOf);
  tag(RelativeTimeFormat.prototype, "Intl.RelativeTimeFormat");

  define(Intl, "PluralRules", PluralRules);
  define(Intl, "Collator", Collator);
  define(Intl, "ListFormat", ListFormat);
  define(Intl, "RelativeTimeFormat", RelativeTimeFormat);
})
