// The Intl table of one locale: expressions a step evaluates for the
// locale L, each against the value node gives (gen.sh writes
// locales/L.json for every locale of internal/intl/gen/locales.txt).
// intl_test.go's TestIntlLocalesAgainstNode runs them.
function localeCases(L) {
  const q = JSON.stringify, l = q(L);
  const cases = [];
  const add = expr => cases.push(expr);
  // Dates: either side of DST changes in America and Europe, a southern
  // summer, a leap day and a date before 1970.
  const zones = ["America/New_York", "Europe/Berlin", "Europe/London", "Australia/Sydney", "Asia/Tokyo", "UTC"];
  const instants = ["2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-10-25T00:59:59Z", "2026-10-25T01:00:00Z",
    "2000-02-29T23:59:59.999Z", "1969-12-31T23:00:00Z"];
  const opts = [
    "{}",
    '{dateStyle: "full", timeStyle: "full"}',
    '{dateStyle: "medium", timeStyle: "long"}',
    '{hour: "numeric", minute: "2-digit", timeZoneName: "short"}',
    '{weekday: "long", year: "numeric", month: "long", day: "numeric"}',
    '{month: "short", day: "numeric", hour: "numeric", minute: "2-digit"}',
  ];
  for (const z of zones) for (const t of instants) for (const o of opts)
    add(`new Intl.DateTimeFormat(${l}, Object.assign({timeZone: ${q(z)}}, ${o})).format(new Date(${q(t)}))`);
  // dateStyle × timeStyle, each alone, and option bags.
  const styles = ["full", "long", "medium", "short"];
  for (const d of styles) for (const t of styles)
    add(`new Intl.DateTimeFormat(${l}, {timeZone: "Europe/Paris", dateStyle: "${d}", timeStyle: "${t}"}).format(new Date("2026-07-01T12:34:56Z"))`);
  for (const s of styles) {
    add(`new Intl.DateTimeFormat(${l}, {timeZone: "America/Los_Angeles", dateStyle: "${s}"}).format(new Date("2026-01-05T08:04:05Z"))`);
    add(`new Intl.DateTimeFormat(${l}, {timeZone: "America/Los_Angeles", timeStyle: "${s}"}).format(new Date("2026-01-05T08:04:05Z"))`);
  }
  for (const o of [
    '{year: "numeric"}', '{year: "2-digit", month: "2-digit", day: "2-digit"}', '{month: "long"}', '{month: "narrow"}',
    '{month: "short", year: "numeric"}', '{month: "long", day: "numeric"}', '{weekday: "short"}', '{weekday: "narrow", day: "numeric"}',
    '{weekday: "short", month: "short", day: "numeric", year: "numeric"}', '{era: "short", year: "numeric"}', '{era: "long"}',
    '{hour: "numeric"}', '{hour: "2-digit", minute: "2-digit"}', '{hour: "numeric", minute: "numeric", second: "numeric"}',
    '{minute: "2-digit", second: "2-digit"}', '{hour: "numeric", hourCycle: "h23"}', '{hour: "numeric", minute: "numeric", hourCycle: "h12"}',
    '{hour: "numeric", hour12: true}', '{timeStyle: "short", hourCycle: "h12"}', '{timeStyle: "medium", hourCycle: "h23"}',
    '{hour: "numeric", minute: "numeric", second: "numeric", fractionalSecondDigits: 3}',
    '{dayPeriod: "long", hour: "numeric"}', '{dayPeriod: "short"}',
    '{timeZoneName: "long"}', '{timeZoneName: "shortOffset"}', '{timeZoneName: "longOffset", hour: "numeric"}',
    '{year: "numeric", month: "long", day: "numeric", hour: "numeric", minute: "numeric"}',
    '{weekday: "long", hour: "numeric", minute: "numeric"}',
  ]) for (const t of ["2026-01-05T08:04:05.678Z", "2026-07-01T19:30:00Z"])
    add(`new Intl.DateTimeFormat(${l}, Object.assign({timeZone: "Europe/Paris"}, ${o})).format(new Date(${q(t)}))`);
  for (const z of ["America/Los_Angeles", "Europe/Paris", "Asia/Tokyo", "UTC"]) for (const n of ["shortGeneric", "longGeneric"])
    add(`new Intl.DateTimeFormat(${l}, {timeZone: ${q(z)}, hour: "numeric", timeZoneName: "${n}"}).format(new Date("2026-01-05T08:04:05Z"))`);
  for (const o of ['{dateStyle: "medium", timeStyle: "short"}', '{weekday: "short", hour: "numeric", timeZoneName: "short"}'])
    add(`new Intl.DateTimeFormat(${l}, Object.assign({timeZone: "America/New_York"}, ${o})).formatToParts(new Date("2026-07-01T17:05:00Z"))`);
  for (const o of ['{}', '{dateStyle: "long", timeStyle: "short"}', '{hour: "numeric", minute: "numeric"}', '{month: "long", hour: "2-digit"}'])
    add(`new Intl.DateTimeFormat(${l}, Object.assign({timeZone: "Asia/Kolkata"}, ${o})).resolvedOptions()`);
  add(`new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString(${l}, {timeZone: "Europe/Paris"})`);
  add(`new Date(Date.UTC(2026, 6, 1, 12)).toLocaleDateString(${l}, {timeZone: "Europe/Paris"})`);
  add(`new Date(Date.UTC(2026, 6, 1, 12)).toLocaleTimeString(${l}, {timeZone: "Europe/Paris"})`);
  add(`new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString(${l})`);
  // Numbers.
  for (const v of ["0", "-0", "1", "-1.5", "1234", "12345", "1234567.891", "0.000123", "1e21", "NaN", "-Infinity", "123456789012345678901234567890n"])
    add(`new Intl.NumberFormat(${l}).format(${v})`);
  for (const o of [
    '{maximumFractionDigits: 0}', '{minimumFractionDigits: 2}', '{maximumSignificantDigits: 2}', '{useGrouping: false}',
    '{useGrouping: "always"}', '{minimumIntegerDigits: 4}', '{signDisplay: "always"}', '{signDisplay: "exceptZero"}',
    '{style: "percent"}', '{style: "percent", maximumFractionDigits: 2}',
    '{notation: "scientific"}', '{notation: "engineering"}', '{notation: "compact"}', '{notation: "compact", compactDisplay: "long"}',
  ]) for (const v of ["-1234.5678", "0.25", "98765432.1"])
    add(`new Intl.NumberFormat(${l}, ${o}).format(${v})`);
  for (const v of ["999", "1000", "1500", "12345", "999999", "1234567", "1000000", "2500000000", "1e13", "-45000"]) {
    add(`new Intl.NumberFormat(${l}, {notation: "compact"}).format(${v})`);
    add(`new Intl.NumberFormat(${l}, {notation: "compact", compactDisplay: "long"}).format(${v})`);
  }
  for (const c of ["USD", "EUR", "JPY", "GBP", "CHF", "BRL", "SEK", "CNY", "KRW", "INR", "XYZ"]) {
    add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "${c}"}).format(-1234.567)`);
    add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "${c}", currencyDisplay: "narrowSymbol"}).format(1)`);
    add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "${c}", currencyDisplay: "code"}).format(1234.5)`);
    add(`[1, 2, 5, 1234.5].map(v => new Intl.NumberFormat(${l}, {style: "currency", currency: "${c}", currencyDisplay: "name"}).format(v))`);
    add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "${c}", currencySign: "accounting"}).format(-5)`);
  }
  add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "EUR", signDisplay: "always"}).format(5)`);
  add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "USD", notation: "compact"}).format(1234567)`);
  add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "EUR"}).formatToParts(-1234.5)`);
  add(`new Intl.NumberFormat(${l}, {style: "percent", signDisplay: "always"}).formatToParts(0.125)`);
  add(`new Intl.NumberFormat(${l}, {notation: "compact", compactDisplay: "long"}).formatToParts(1234567)`);
  for (const u of ["kilometer-per-hour", "liter", "megabyte", "celsius", "percent", "hour", "kilogram", "mile-per-gallon", "meter-per-second", "byte-per-second"])
    for (const d of ["long", "short", "narrow"])
      add(`[1, 2, 5, 1.5].map(v => new Intl.NumberFormat(${l}, {style: "unit", unit: "${u}", unitDisplay: "${d}"}).format(v))`);
  add(`new Intl.NumberFormat(${l}, {style: "unit", unit: "kilometer-per-hour", unitDisplay: "long"}).formatToParts(88)`);
  add(`new Intl.NumberFormat(${l}, {style: "currency", currency: "EUR"}).resolvedOptions()`);
  add(`(1234567.891).toLocaleString(${l})`);
  add(`(12345678901234567890n).toLocaleString(${l})`);
  // Relative times.
  for (const style of ["long", "short", "narrow"]) for (const numeric of ["always", "auto"])
    for (const unit of ["second", "minute", "hour", "day", "week", "month", "quarter", "year"])
      add(`[-2, -1, 0, 1, 2, 5, -3.5, 1234].map(v => new Intl.RelativeTimeFormat(${l}, {style: "${style}", numeric: "${numeric}"}).format(v, "${unit}"))`);
  add(`new Intl.RelativeTimeFormat(${l}).formatToParts(-1234.5, "days")`);
  add(`new Intl.RelativeTimeFormat(${l}, {numeric: "auto"}).formatToParts(1, "day")`);
  add(`new Intl.RelativeTimeFormat(${l}, {style: "short"}).resolvedOptions()`);
  // Lists.
  for (const type of ["conjunction", "disjunction", "unit"]) for (const style of ["long", "short", "narrow"])
    add(`[["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"]].map(x => new Intl.ListFormat(${l}, {type: "${type}", style: "${style}"}).format(x))`);
  add(`new Intl.ListFormat(${l}).formatToParts(["x", "y", "z"])`);
  add(`new Intl.ListFormat(${l}, {type: "disjunction"}).resolvedOptions()`);
  // Plural rules and collation.
  add(`new Intl.PluralRules(${l}).resolvedOptions().pluralCategories`);
  add(`[0, 1, 2, 3, 5, 11, 21, 22, 25, 100, 101, 1.5, 0.5, 1000000].map(n => new Intl.PluralRules(${l}).select(n))`);
  add(`[1, 2, 3, 4, 11, 21, 22, 23, 101].map(n => new Intl.PluralRules(${l}, {type: "ordinal"}).select(n))`);
  add(`["b", "a", "B", "A", "ä", "z", "é", "e", "ø", "ñ", "n", "ch", "c", "ş", "s", "ł", "l", "zebra", "Äpfel", "apple"].sort(new Intl.Collator(${l}).compare)`);
  add(`["item 10", "item 2", "item 1"].sort(new Intl.Collator(${l}, {numeric: true}).compare)`);
  // Locale resolution.
  for (const C of ["DateTimeFormat", "NumberFormat", "RelativeTimeFormat", "ListFormat"])
    add(`new Intl.${C}(${l}).resolvedOptions().locale`);
  add(`Intl.DateTimeFormat.supportedLocalesOf([${l}])`);
  return cases;
}

// evaluate runs the cases of L: each [expr, its value as JSON or "throws
// NAME: message"].
function evaluate(L) {
  return localeCases(L).map(expr => {
    let v;
    try { v = JSON.stringify((0, eval)(expr)) } catch (e) { v = "throws " + e.name + ": " + e.message }
    return [expr, v];
  });
}
