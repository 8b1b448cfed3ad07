// The time zone table: expressions a step evaluates in a run whose time
// zone is each of zones, each against the value node gives with TZ set to
// that zone (gen.sh writes golden.json). Node's Date.prototype.toString
// and toTimeString end with the zone's name in parentheses, which
// QuickJS's do not write: zone_test.go drops it from node's value.
const zones = ["Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
  "America/Sao_Paulo", "Pacific/Chatham", "Europe/London", "America/St_Johns", "Asia/Kathmandu",
  "Pacific/Apia", "UTC"];
// Instants: either side of 2026's changes in Europe and North America,
// Lord Howe's half hour, noon in summer and winter, the epoch, 1900
// (local mean time in several zones), a leap day, far past and future.
const instants = [
  "2026-03-29T00:59:59.999Z", "2026-03-29T01:00:00Z", "2026-10-25T00:59:59Z", "2026-10-25T01:00:00Z",
  "2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-11-01T05:59:59Z", "2026-11-01T06:00:00Z",
  "2026-04-04T14:59:59Z", "2026-04-04T15:00:00Z", "2026-07-01T12:00:00Z", "2026-01-15T12:00:00Z",
  "1970-01-01T00:00:00Z", "1900-01-01T00:00:00Z", "1850-06-01T12:34:56Z", "2000-02-29T23:59:59.999Z",
  "2099-12-31T23:59:59Z", "-000100-03-01T00:00:00Z", "+010000-01-01T00:00:00Z",
];
const fields = "[d.getFullYear(), d.getMonth(), d.getDate(), d.getDay(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds(), d.getTimezoneOffset(), d.getYear()]";
const cases = [];
const add = expr => cases.push(expr);
for (const t of instants) {
  add(`(d => ${fields})(new Date(${JSON.stringify(t)}))`);
  add(`new Date(${JSON.stringify(t)}).toString()`);
  add(`[new Date(${JSON.stringify(t)}).toDateString(), new Date(${JSON.stringify(t)}).toTimeString()]`);
}
// Wall-clock times to instants: gaps and repeats of each zone, local mean
// time, two-digit years, overflowing fields, invalid ones.
for (const args of [
  "2026, 2, 29, 2, 30", "2026, 2, 29, 1, 59, 59, 999", "2026, 2, 29, 3, 0", "2026, 9, 25, 2, 30", "2026, 9, 25, 1, 30",
  "2026, 9, 25, 3, 0", "2026, 2, 8, 2, 30", "2026, 10, 1, 1, 30", "2026, 3, 5, 1, 45", "2026, 3, 5, 2, 15",
  "2026, 9, 4, 2, 15", "2026, 8, 27, 3, 30", "2026, 8, 27, 2, 30", "2026, 6, 1", "2026, 0", "1900, 0, 1",
  "1850, 5, 1, 12, 34, 56", "99, 0", "0, 0", "-1, 0", "2026, 0, 31 + 30", "2026, 12, 1", "2026, -1, 1", "2026, 6, 1, 24",
  "2026, 6, 1, 0, -1", "2026, 6, 1, 0, 0, 0, 1.9", "NaN, 0", "2026, NaN", "275760, 8, 13", "275760, 8, 14", "-271821, 3, 19",
  "2011, 11, 30", "2011, 11, 29, 12", "2011, 11, 31",
]) {
  add(`new Date(${args}).getTime()`);
  add(`(d => ${fields})(new Date(${args}))`);
}
add(`new Date(2026).getTime()`);
add(`new Date(new Date(2026, 6, 1)).getTime()`);
add(`new Date({ valueOf() { return 86400000 } }).getTime()`);
add(`new Date({ [Symbol.toPrimitive]() { return "2026-07-01T12:00" } }).getTime()`);
add(`new Date({ valueOf() { return {} }, toString() { return "2026-07-01" } }).getTime()`);
add(`(() => { try { new Date(Symbol()); return "no" } catch (e) { return e.constructor.name } })()`);
add(`(() => { try { new Date(1n); return "no" } catch (e) { return e.constructor.name } })()`);
add(`(() => { try { return new Date(2026, 0, 1, Symbol()) } catch (e) { return e.constructor.name } })()`);
// Strings: the ISO forms (a date alone is UTC, a date and time without an
// offset local time), and the forms QuickJS and V8 both read.
for (const s of [
  "2026-07-01", "2026-07", "2026", "+002026-07-01", "2026-07-01T12:00", "2026-07-01T12:00:00", "2026-07-01T12:00:00.123",
  "2026-07-01T12:00Z", "2026-07-01T12:00:00+05:30", "2026-07-01T12:00:00-0800", "2026-03-29T02:30", "2026-10-25T02:30",
  "2026-07-01 12:00", "2026-07-01 12:00:00", "2026-07-01T12:00:00.000Z",
  "July 1, 2026", "July 1, 2026 10:00", "Jul 1 2026 10:00:00", "1 July 2026 10:00", "Wed Jul 01 2026 14:00:00 GMT+0200",
  "Wed Jul 01 2026 14:00:00 GMT+0200 (Central European Summer Time)", "Wed, 01 Jul 2026 12:00:00 GMT",
  "2026/07/01", "2026/07/01 12:00", "07/01/2026", "7/1/2026 1:00 PM", "2026/07/01 12:00 PST", "2026/07/01 12:00 EDT",
  "Jul 1 2026 12:00 UTC", "Jul 1 2026 12:00 Z", "Jul 1 2026 12:00 -0500", "Jul 1 2026 12:00 UT",
  "not a date", "",
]) {
  add(`Date.parse(${JSON.stringify(s)})`);
  add(`new Date(${JSON.stringify(s)}).getTime()`);
}
// Setters, each from a copy of a date before a change, and from an
// invalid date.
const base = `new Date(2026, 2, 28, 2, 30, 15, 250)`;
for (const call of [
  "setHours(2)", "setHours(2, 30)", "setDate(29)", "setDate(0)", "setDate(400)", "setMonth(9, 25)", "setMonth(-1)",
  "setFullYear(2027)", "setFullYear(2026, 9, 25)", "setMinutes(-1)", "setMinutes(90, 5)", "setSeconds(3600)",
  "setMilliseconds(-1)", "setMilliseconds(86400000 * 1.5)", "setHours(NaN)", "setHours()", "setYear(99)",
  "setYear(2030)", "setHours(26, 61, 61, 1001)", "setTime(0)",
]) {
  add(`(d => [d.${call}, d.getTime(), d.getHours(), d.getTimezoneOffset()])(${base})`);
  add(`(d => [d.${call}, d.getTime()])(new Date(NaN))`);
}
add(`(d => [d.setUTCHours(0), d.getHours()])(${base})`);
// The rest of Date is the engine's, and agrees with the zone.
add(`JSON.stringify(new Date(2026, 6, 1))`);
add(`new Date(2026, 6, 1).toISOString()`);
add(`new Date(2026, 6, 1).toUTCString()`);
add(`String(new Date(2026, 6, 1, 8))`);
add(`\`\${new Date(2026, 0, 1)}\``);
add(`new Date(2026, 6, 1) + 1`);
add(`new Date(2026, 6, 1) - new Date(2026, 0, 1)`);
add(`new Date(2026, 6, 1).valueOf() === Date.UTC(2026, 6, 1) - new Date(2026, 6, 1).getTimezoneOffset() * -60000`);
add(`[typeof Date, Date.length, Date.name, Date.prototype.constructor === Date, new Date() instanceof Date, Object.prototype.toString.call(new Date())]`);
add(`(() => { class D extends Date { week() { return 1 } } const d = new D(2026, 6, 1); return [d instanceof D, d instanceof Date, d.week(), d.getHours(), d.getTime()] })()`);
add(`[typeof Date(), Date(1, 2, 3) === Date()]`);
add(`Object.getOwnPropertyNames(Date).sort()`);
add(`new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US")`);
add(`new Date(Date.UTC(2026, 0, 1, 12)).toLocaleTimeString("en-US")`);
add(`new Intl.DateTimeFormat("en-US", { dateStyle: "full", timeStyle: "long" }).format(new Date(Date.UTC(2026, 6, 1, 12)))`);
add(`new Date(2026, 6, 1, 9).toLocaleString("en-US", { timeZone: "UTC" })`);

function evaluate() {
  const out = [];
  for (const c of cases) {
    let v;
    try { v = JSON.stringify((0, eval)(c)); } catch (e) { v = "throws " + e.constructor.name; }
    out.push([c, v === undefined ? "undefined" : v]);
  }
  return out;
}
