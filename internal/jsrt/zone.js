// Stepbox guest Date in a run's time zone. The host evaluates this part
// (zone.go, setZone) before the step runs, when the run's time zone is not
// the process's: QuickJS's Date reads local time from the C library, for
// the whole process, and a worker's is UTC. This part replaces the global
// Date and the methods of Date.prototype that read or write local time
// with ones that compute it from the UTC methods and the zone's offsets,
// which the host function __sbx_zone_offset(ms) gives as
// [offset, start, end]: the offset in milliseconds at the instant ms and
// the interval in which it holds, cached here. Everything else of Date
// (the UTC methods, toISOString, toJSON, valueOf, Symbol.toPrimitive) is
// untouched, and a Date made here is the engine's own Date object.
//
// Local time to an instant follows ECMA-262's UTC(t): a wall-clock time
// that happens twice (when clocks go back) is the earlier instant; one
// that never happens (when they go forward) is read with the offset before
// the change, so 02:30 on a spring-forward night is 03:30.
//
// The methods keep what they use of the built-ins in this closure, as the
// bootstrap does: a step that replaces a built-in later changes nothing
// here.
"use strict";
(function __sbx_zone(g) {
  const offsetOf = g.__sbx_zone_offset;
  delete g.__sbx_zone_offset;
  const DateCtor = g.Date;
  const DP = DateCtor.prototype;
  const ReflectApply = Reflect.apply, ReflectConstruct = Reflect.construct;
  const ObjectDefineProperty = Object.defineProperty;
  const DateNow = DateCtor.now, DateParse = DateCtor.parse, DateUTC = DateCtor.UTC;
  const getTime = DP.getTime, setTime = DP.setTime;
  const getUTCFullYear = DP.getUTCFullYear, setUTCFullYear = DP.setUTCFullYear;
  const StringCtor = String, NumberCtor = Number, TypeErrorCtor = TypeError;
  const SymbolToPrimitive = Symbol.toPrimitive;
  const RegExpExec = RegExp.prototype.exec;
  const StringSlice = String.prototype.slice, StringPadStart = String.prototype.padStart;
  const MathAbs = Math.abs, MathFloor = Math.floor, MathTrunc = Math.trunc;
  const DAY = 864e5;
  // uncurry(f)(self, ...args) calls f on self without a lookup: a function
  // bound to the Function.prototype.call of before the step.
  const FunctionCall = Function.prototype.call, FunctionBind = Function.prototype.bind;
  function uncurry(f) { return ReflectApply(FunctionBind, FunctionCall, [f]); }
  const timeOf = uncurry(getTime), setTimeOf = uncurry(setTime);

  // The two intervals [lo, hi) last asked about and their offsets: a
  // local time near a change reads both sides of it.
  let lo = 0, hi = -1, off = 0, lo2 = 0, hi2 = -1, off2 = 0;
  // The first is always the one of the last instant asked about.
  function offsetAt(t) {
    if (t >= lo && t < hi) return off;
    const l = lo, h = hi, o = off;
    if (t >= lo2 && t < hi2) {
      lo = lo2; hi = hi2; off = off2;
    } else {
      const r = offsetOf(t);
      off = r[0]; lo = r[1]; hi = r[2];
    }
    lo2 = l; hi2 = h; off2 = o;
    return off;
  }
  // utcOf is ECMA-262's UTC(t) for a finite local time value.
  function utcOf(local) {
    // Far from a change (no other offset within a day either side), the
    // only instant; near one, every candidate.
    const o = offsetAt(local), t = local - o;
    if (t - DAY >= lo && t + DAY < hi) return t;
    const before = offsetAt(local - DAY), after = offsetAt(local + DAY);
    const t1 = local - before, t2 = local - after;
    const ok1 = offsetAt(t1) === before, ok2 = offsetAt(t2) === after;
    if (ok1 && ok2) return t1 < t2 ? t1 : t2;
    if (ok1) return t1;
    if (ok2) return t2;
    return local - before;
  }

  // A scratch Date that holds local time values, read and written with
  // the UTC methods.
  const scratch = ReflectConstruct(DateCtor, [0], DateCtor);
  function localOf(d) {
    const t = timeOf(d); // throws the engine's TypeError for a non-Date
    return t === t ? t + offsetAt(t) : t;
  }

  function define(name, fn) {
    ObjectDefineProperty(DP, name, { __proto__: null, value: fn, writable: true, enumerable: false, configurable: true });
  }
  // Getters: the fields of the local time value, by arithmetic (as
  // ECMA-262 defines them: no call into the engine but getTime).
  function mod(a, b) { const r = a % b; return r < 0 ? r + b : r; }
  // civil is the proleptic Gregorian date of day number d (days since
  // 1970-01-01) as year * 10000 + month (1-12) * 100 + day, with the
  // days-from-civil inverse of H. Hinnant's date algorithms.
  function civil(d) {
    const z = d + 719468;
    const era = MathFloor(z / 146097);
    const doe = z - era * 146097;
    const yoe = MathFloor((doe - MathFloor(doe / 1460) + MathFloor(doe / 36524) - MathFloor(doe / 146096)) / 365);
    const doy = doe - (365 * yoe + MathFloor(yoe / 4) - MathFloor(yoe / 100));
    const mp = MathFloor((5 * doy + 2) / 153);
    const day = doy - MathFloor((153 * mp + 2) / 5) + 1;
    const month = mp < 10 ? mp + 3 : mp - 9;
    const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    return [year, month - 1, day];
  }
  // Each written out: a getter is called often, and a call is most of
  // its cost.
  define("getFullYear", function getFullYear() {
    const t = timeOf(this);
    return t !== t ? t : civil(MathFloor((t + offsetAt(t)) / DAY))[0];
  });
  define("getMonth", function getMonth() {
    const t = timeOf(this);
    return t !== t ? t : civil(MathFloor((t + offsetAt(t)) / DAY))[1];
  });
  define("getDate", function getDate() {
    const t = timeOf(this);
    return t !== t ? t : civil(MathFloor((t + offsetAt(t)) / DAY))[2];
  });
  define("getDay", function getDay() {
    const t = timeOf(this);
    return t !== t ? t : mod(MathFloor((t + offsetAt(t)) / DAY) + 4, 7);
  });
  define("getHours", function getHours() {
    const t = timeOf(this);
    return t !== t ? t : MathFloor(mod(t + offsetAt(t), DAY) / 36e5);
  });
  define("getMinutes", function getMinutes() {
    const t = timeOf(this);
    return t !== t ? t : MathFloor(mod(t + offsetAt(t), 36e5) / 6e4);
  });
  define("getSeconds", function getSeconds() {
    const t = timeOf(this);
    return t !== t ? t : MathFloor(mod(t + offsetAt(t), 6e4) / 1e3);
  });
  define("getMilliseconds", function getMilliseconds() {
    const t = timeOf(this);
    return t !== t ? t : mod(t + offsetAt(t), 1e3);
  });
  if (DP.getYear !== undefined) {
    define("getYear", function getYear() {
      const t = timeOf(this);
      return t !== t ? t : civil(MathFloor((t + offsetAt(t)) / DAY))[0] - 1900;
    });
  }
  define("getTimezoneOffset", function getTimezoneOffset() {
    const t = timeOf(this);
    // In whole minutes, as V8's: local mean time's seconds are dropped.
    return t === t ? MathTrunc(-offsetAt(t) / 6e4) + 0 : t;
  });

  // Setters: the UTC setter on the local time value (+0 for setFullYear
  // of an invalid date, as its UTC form does), then back to an instant.
  function setter(name, utc, fromZero) {
    const set = uncurry(DP[utc]);
    const o = { __proto__: null };
    // Each with as many arguments as it was given: an absent one is not
    // an undefined one (setHours(1) keeps the minutes).
    o[name] = function (a, b, c, d) {
      let l = localOf(this);
      if (l !== l && fromZero) l = 0;
      setTimeOf(scratch, l);
      const n = arguments.length;
      const nl = n === 0 ? set(scratch) : n === 1 ? set(scratch, a) : n === 2 ? set(scratch, a, b) :
        n === 3 ? set(scratch, a, b, c) : set(scratch, a, b, c, d);
      return setTimeOf(this, nl === nl ? utcOf(nl) : nl);
    };
    define(name, o[name]);
  }
  setter("setFullYear", "setUTCFullYear", true);
  setter("setMonth", "setUTCMonth", false);
  setter("setDate", "setUTCDate", false);
  setter("setHours", "setUTCHours", false);
  setter("setMinutes", "setUTCMinutes", false);
  setter("setSeconds", "setUTCSeconds", false);
  setter("setMilliseconds", "setUTCMilliseconds", false);
  if (DP.setYear !== undefined) {
    define("setYear", function setYear(year) {
      let l = localOf(this);
      if (l !== l) l = 0;
      let y = NumberCtor(year);
      if (y !== y) return setTimeOf(this, y);
      y = MathTrunc(y);
      if (y >= 0 && y <= 99) y += 1900;
      setTimeOf(scratch, l);
      const nl = ReflectApply(setUTCFullYear, scratch, [y]);
      return setTimeOf(this, nl === nl ? utcOf(nl) : nl);
    });
  }

  // Strings: QuickJS's forms ("Wed Jul 01 2026 14:00:00 GMT+0200"), with
  // the run's offset.
  const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const getUTCMonth = DP.getUTCMonth, getUTCDate = DP.getUTCDate, getUTCDay = DP.getUTCDay;
  const getUTCHours = DP.getUTCHours, getUTCMinutes = DP.getUTCMinutes, getUTCSeconds = DP.getUTCSeconds;
  function pad(n, w) { return ReflectApply(StringPadStart, StringCtor(n), [w, "0"]); }
  function dateString(l) {
    setTimeOf(scratch, l);
    const y = ReflectApply(getUTCFullYear, scratch, []);
    return DAYS[ReflectApply(getUTCDay, scratch, [])] + " " + MONTHS[ReflectApply(getUTCMonth, scratch, [])] + " " +
      pad(ReflectApply(getUTCDate, scratch, []), 2) + " " + (y < 0 ? "-" + pad(-y, 4) : pad(y, 4));
  }
  function timeString(l, offset) {
    setTimeOf(scratch, l);
    const m = MathFloor(MathAbs(offset) / 6e4);
    return pad(ReflectApply(getUTCHours, scratch, []), 2) + ":" + pad(ReflectApply(getUTCMinutes, scratch, []), 2) + ":" +
      pad(ReflectApply(getUTCSeconds, scratch, []), 2) + " GMT" + (offset < 0 ? "-" : "+") +
      pad(MathFloor(m / 60), 2) + pad(m % 60, 2);
  }
  define("toString", function toString() {
    const t = timeOf(this);
    if (t !== t) return "Invalid Date";
    const o = offsetAt(t);
    return dateString(t + o) + " " + timeString(t + o, o);
  });
  define("toDateString", function toDateString() {
    const t = timeOf(this);
    return t !== t ? "Invalid Date" : dateString(t + offsetAt(t));
  });
  define("toTimeString", function toTimeString() {
    const t = timeOf(this);
    if (t !== t) return "Invalid Date";
    const o = offsetAt(t);
    return timeString(t + o, o);
  });
  const dateToString = DP.toString;

  // Parsing: QuickJS reads a string without a zone as UTC here (the
  // process's local time); such a string is local time.
  const ISO_DATE = /^[+-]?\d{4,6}(?:-\d\d(?:-\d\d)?)?$/;
  const ZONED = /(?:\d[Tt ]?[\d:.,]*\s*[Zz]$)|(?:[+-]\d\d:?\d\d\s*(?:\([^)]*\))?\s*$)|\b(?:GMT|UTC|UT|[ECMP][SD]T|Z)\b/;
  function parseLocal(s) {
    const t = DateParse(s);
    if (t !== t) return t;
    if (ReflectApply(RegExpExec, ISO_DATE, [s]) !== null || ReflectApply(RegExpExec, ZONED, [s]) !== null) return t;
    return utcOf(t);
  }
  function toPrimitive(v) {
    const ex = v[SymbolToPrimitive];
    if (ex !== undefined && ex !== null) {
      const r = ReflectApply(ex, v, ["default"]);
      if (r !== null && (typeof r === "object" || typeof r === "function")) throw new TypeErrorCtor("cannot convert to primitive");
      return r;
    }
    const names = ["valueOf", "toString"];
    for (let i = 0; i < 2; i++) {
      const f = v[names[i]];
      if (typeof f === "function") {
        const r = ReflectApply(f, v, []);
        if (r === null || (typeof r !== "object" && typeof r !== "function")) return r;
      }
    }
    throw new TypeErrorCtor("cannot convert to primitive");
  }

  // The constructor: components are local time, as is a string without a
  // zone; everything else is as the engine's.
  function Date(year, monthIndex, day, hours, minutes, seconds, ms) {
    if (new.target === undefined) return ReflectApply(dateToString, ReflectConstruct(DateCtor, [DateNow()], DateCtor), []);
    const n = arguments.length;
    let tv;
    if (n === 0) {
      tv = DateNow();
    } else if (n === 1) {
      let v = year;
      if (v !== null && (typeof v === "object" || typeof v === "function")) {
        let isDate = true;
        try { tv = timeOf(v); } catch (_) { isDate = false; }
        if (!isDate) v = toPrimitive(v);
      }
      if (tv === undefined) tv = typeof v === "string" ? parseLocal(v) : v;
    } else {
      const u = n === 2 ? DateUTC(year, monthIndex) : n === 3 ? DateUTC(year, monthIndex, day) :
        n === 4 ? DateUTC(year, monthIndex, day, hours) : n === 5 ? DateUTC(year, monthIndex, day, hours, minutes) :
          n === 6 ? DateUTC(year, monthIndex, day, hours, minutes, seconds) :
            DateUTC(year, monthIndex, day, hours, minutes, seconds, ms);
      tv = u === u ? utcOf(u) : u;
    }
    return new.target === Date ? new DateCtor(tv) : ReflectConstruct(DateCtor, [tv], new.target);
  }
  ObjectDefineProperty(Date, "prototype", { __proto__: null, value: DP, writable: false, enumerable: false, configurable: false });
  ObjectDefineProperty(Date, "now", { __proto__: null, value: DateNow, writable: true, enumerable: false, configurable: true });
  ObjectDefineProperty(Date, "UTC", { __proto__: null, value: DateUTC, writable: true, enumerable: false, configurable: true });
  ObjectDefineProperty(Date, "parse", {
    __proto__: null, writable: true, enumerable: false, configurable: true,
    value: { parse(s) { return parseLocal(StringCtor(s)); } }.parse,
  });
  define("constructor", Date);
  ObjectDefineProperty(g, "Date", { __proto__: null, value: Date, writable: true, enumerable: false, configurable: true });
})(globalThis);
