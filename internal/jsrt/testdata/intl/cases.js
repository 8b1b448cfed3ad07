// The Intl table: expressions a step evaluates, each against the value
// node gives (gen.sh writes golden.json). Group "exact" is English;
// group "locale" a few cases of other locales (locales.js has many more,
// for every locale). intl_test.go asserts both.
const zones = ["America/New_York", "Europe/Paris", "Australia/Sydney", "Asia/Kolkata", "America/Sao_Paulo",
  "Pacific/Chatham", "Asia/Tokyo", "UTC", "Europe/London", "America/Los_Angeles"];
// Instants either side of DST changes in 2026 and one summer noon.
const instants = ["2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-11-01T05:59:59Z", "2026-11-01T06:00:00Z",
  "2026-03-29T00:59:59Z", "2026-03-29T01:00:00Z", "2026-10-25T00:59:59Z", "2026-10-25T01:00:00Z",
  "2026-04-04T15:59:59Z", "2026-04-04T16:00:00Z", "2026-07-01T12:00:00Z", "2000-02-29T23:59:59.999Z"];
const dtfOptions = [
  "{}",
  '{dateStyle: "full", timeStyle: "long"}',
  '{dateStyle: "medium", timeStyle: "short"}',
  '{hour: "2-digit", minute: "2-digit", hourCycle: "h23"}',
  '{year: "numeric", month: "long", day: "numeric", weekday: "long"}',
  '{month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short"}',
];
const cases = [];
const add = (group, expr) => cases.push([group, expr]);
for (const z of zones) for (const t of instants) for (const o of dtfOptions)
  add("exact", `new Intl.DateTimeFormat("en-US", Object.assign({timeZone: ${JSON.stringify(z)}}, ${o})).format(new Date(${JSON.stringify(t)}))`);
for (const z of zones) {
  add("exact", `new Intl.DateTimeFormat("en-US", {timeZone: ${JSON.stringify(z)}, dateStyle: "short", timeStyle: "medium"}).formatToParts(new Date("2026-07-01T12:00:00Z"))`);
  if (z !== "Asia/Kolkata") add("exact", `new Intl.DateTimeFormat("en-US", {timeZone: ${JSON.stringify(z)}}).resolvedOptions()`);
  add("exact", `new Date("2026-10-25T01:00:00Z").toLocaleString("en-US", {timeZone: ${JSON.stringify(z)}})`);
}
for (const e of [
  `new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" })`,
  `new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString()`,
  `new Date(Date.UTC(2026, 6, 1, 12)).toLocaleDateString()`,
  `new Date(Date.UTC(2026, 6, 1, 12)).toLocaleTimeString()`,
  `new Date(Date.UTC(2026, 6, 1, 12)).toLocaleDateString("en-US", {weekday: "short", timeZone: "Asia/Tokyo"})`,
  `new Date(NaN).toLocaleString()`,
  `new Intl.DateTimeFormat().resolvedOptions().timeZone`,
  `new Intl.DateTimeFormat().resolvedOptions().locale`,
  `Intl.DateTimeFormat.supportedLocalesOf(["en-US", "en-GB"]).length > 0`,
  `(() => { try { new Intl.DateTimeFormat("en-US", {timeZone: "Mars/Olympus"}); return "no error" } catch (e) { return e.name } })()`,
  // NumberFormat
  `(1234567.891).toLocaleString()`,
  `(1234567.891).toLocaleString("en-US", {maximumFractionDigits: 1})`,
  `(-0.5).toLocaleString()`, `(0).toLocaleString()`, `(1e21).toLocaleString()`, `(NaN).toLocaleString()`, `(Infinity).toLocaleString()`,
  `(12345678901234567890n).toLocaleString()`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "USD"}).format(-1234.5)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "EUR"}).format(1234.5)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "JPY"}).format(1234.5)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "GBP", currencyDisplay: "code"}).format(99.999)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "USD", currencySign: "accounting"}).format(-5)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "CAD", currencyDisplay: "narrowSymbol"}).format(5)`,
  `new Intl.NumberFormat("en-US", {style: "percent"}).format(0.256)`,
  `new Intl.NumberFormat("en-US", {style: "percent", minimumFractionDigits: 1}).format(-0.0256)`,
  `new Intl.NumberFormat("en-US", {style: "unit", unit: "kilometer-per-hour"}).format(88)`,
  `new Intl.NumberFormat("en-US", {style: "unit", unit: "kilometer-per-hour", unitDisplay: "long"}).format(88)`,
  `new Intl.NumberFormat("en-US", {style: "unit", unit: "liter", unitDisplay: "narrow"}).format(1.5)`,
  `new Intl.NumberFormat("en-US", {style: "unit", unit: "megabyte"}).format(512)`,
  `new Intl.NumberFormat("en-US", {notation: "compact"}).format(1234567)`,
  `new Intl.NumberFormat("en-US", {notation: "compact", compactDisplay: "long"}).format(1234567)`,
  `new Intl.NumberFormat("en-US", {notation: "compact"}).format(999)`,
  `new Intl.NumberFormat("en-US", {notation: "compact"}).format(15300)`,
  `new Intl.NumberFormat("en-US", {notation: "scientific"}).format(123456)`,
  `new Intl.NumberFormat("en-US", {notation: "engineering"}).format(123456)`,
  `new Intl.NumberFormat("en-US", {signDisplay: "always"}).format(5)`,
  `new Intl.NumberFormat("en-US", {signDisplay: "exceptZero"}).format(0)`,
  `new Intl.NumberFormat("en-US", {minimumIntegerDigits: 3, useGrouping: false}).format(7)`,
  `new Intl.NumberFormat("en-US", {maximumSignificantDigits: 3}).format(123456)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "USD"}).formatToParts(-1234.56)`,
  `new Intl.NumberFormat("en-US", {style: "currency", currency: "EUR"}).resolvedOptions()`,
  `(() => { try { new Intl.NumberFormat("en-US", {style: "currency"}); return "no error" } catch (e) { return e.name } })()`,
  // supportedValuesOf
  `Intl.supportedValuesOf("timeZone")`,
  `Intl.supportedValuesOf("unit")`,
  `Intl.supportedValuesOf("calendar").includes("gregory")`,
  `Intl.supportedValuesOf("numberingSystem").includes("latn")`,
  `["USD", "EUR", "JPY", "GBP", "CHF", "INR"].every(c => Intl.supportedValuesOf("currency").includes(c))`,
  `Intl.supportedValuesOf("currency").every(c => /^[A-Z]{3}$/.test(c))`,
  `Intl.supportedValuesOf("timeZone").every(z => new Intl.DateTimeFormat("en-US", {timeZone: z}).resolvedOptions().timeZone === z)`,
  `Intl.supportedValuesOf("unit").every(u => new Intl.NumberFormat("en-US", {style: "unit", unit: u}).resolvedOptions().unit === u)`,
  `Intl.supportedValuesOf({ toString() { return "unit" } }).length`,
  `[Intl.supportedValuesOf.length, Intl.supportedValuesOf.name]`,
  `(() => { try { Intl.supportedValuesOf("zone"); return "no error" } catch (e) { return e.name + ": " + e.message } })()`,
  `(() => { try { Intl.supportedValuesOf(); return "no error" } catch (e) { return e.name + ": " + e.message } })()`,
  `(() => { try { Intl.supportedValuesOf(Symbol()); return "no error" } catch (e) { return e.name } })()`,
  // getCanonicalLocales
  `Intl.getCanonicalLocales(["EN-us", "de-de", "zh-hant-tw", "fr", "en-US"])`,
  `(() => { try { Intl.getCanonicalLocales("en_US"); return "no error" } catch (e) { return e.name } })()`,
  // Collator and localeCompare
  `["b", "a", "B", "A", "ä", "z", "é", "e", "E", "Zebra", "apple", "Äpfel"].sort(new Intl.Collator("en").compare)`,
  `["b", "a", "B", "A", "ä", "z", "é", "e", "E", "Zebra", "apple", "Äpfel"].sort(new Intl.Collator("de").compare)`,
  `["z", "ä", "a", "ö", "o", "å"].sort(new Intl.Collator("sv").compare)`,
  `["10", "9", "2", "1", "item 10", "item 2"].sort(new Intl.Collator("en", {numeric: true}).compare)`,
  `["10", "9", "2", "1"].sort((a, b) => a.localeCompare(b))`,
  `"a".localeCompare("b")`, `"b".localeCompare("a")`, `"a".localeCompare("a")`, `"a".localeCompare("A")`,
  `"résumé".localeCompare("resume", "en", {sensitivity: "base"})`,
  `"résumé".localeCompare("RESUME", "en", {sensitivity: "accent"})`,
  `"a".localeCompare("A", "en", {sensitivity: "accent"})`,
  `"a".localeCompare("á", "en", {sensitivity: "case"})`,
  `new Intl.Collator("de-DE").resolvedOptions()`,
  `new Intl.Collator().resolvedOptions().locale`,
  // ListFormat
  `new Intl.ListFormat("en").format(["a", "b", "c"])`,
  `new Intl.ListFormat("en").format(["a", "b"])`,
  `new Intl.ListFormat("en").format(["a"])`,
  `new Intl.ListFormat("en").format([])`,
  `new Intl.ListFormat("en", {style: "short"}).format(["a", "b", "c", "d"])`,
  `new Intl.ListFormat("en", {style: "short"}).format(["a", "b"])`,
  `new Intl.ListFormat("en", {style: "narrow"}).format(["a", "b", "c"])`,
  `new Intl.ListFormat("en", {type: "disjunction"}).format(["a", "b", "c"])`,
  `new Intl.ListFormat("en", {type: "disjunction"}).format(["a", "b"])`,
  `new Intl.ListFormat("en", {type: "unit"}).format(["5 lb", "12 oz"])`,
  `new Intl.ListFormat("en", {type: "unit", style: "narrow"}).format(["5 lb", "12 oz", "3 g"])`,
  `new Intl.ListFormat("en-US", {type: "disjunction", style: "short"}).formatToParts(["x", "y", "z"])`,
  `new Intl.ListFormat("en", {type: "unit"}).resolvedOptions()`,
  `(() => { try { new Intl.ListFormat("en").format(["a", 1]); return "no error" } catch (e) { return e.name } })()`,
]) add("exact", e);
// RelativeTimeFormat
for (const style of ["long", "short", "narrow"]) for (const numeric of ["always", "auto"])
  for (const unit of ["second", "minutes", "hour", "day", "days", "week", "month", "quarter", "quarters", "year"])
    add("exact", `[-2, -1, -0, 0, 1, 2, 1.5, -1234.5].map(v => new Intl.RelativeTimeFormat("en", {style: "${style}", numeric: "${numeric}"}).format(v, "${unit}"))`);
add("exact", `new Intl.RelativeTimeFormat("en").formatToParts(-1234.5, "days")`);
add("exact", `new Intl.RelativeTimeFormat("en", {numeric: "auto"}).formatToParts(1, "day")`);
add("exact", `new Intl.RelativeTimeFormat("en-US", {style: "short"}).resolvedOptions()`);
add("exact", `(() => { try { new Intl.RelativeTimeFormat("en").format(1, "fortnight"); return "no error" } catch (e) { return e.name } })()`);
add("exact", `(() => { try { new Intl.RelativeTimeFormat("en").format(Infinity, "day"); return "no error" } catch (e) { return e.name } })()`);
// PluralRules
for (const l of ["en", "de", "fr", "ja", "ru", "ar", "pl", "cy", "pt", "cs"]) {
  add("exact", `new Intl.PluralRules(${JSON.stringify(l)}).resolvedOptions()`);
  add("exact", `new Intl.PluralRules(${JSON.stringify(l)}, {type: "ordinal"}).resolvedOptions().pluralCategories`);
  add("exact", `[0, 1, 2, 3, 5, 11, 21, 22, 100, 101, 102, 1.5, 0.5, 1000000, -1, 1.0].map(n => new Intl.PluralRules(${JSON.stringify(l)}).select(n))`);
  add("exact", `[1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(n => new Intl.PluralRules(${JSON.stringify(l)}, {type: "ordinal"}).select(n))`);
}
add("exact", `new Intl.PluralRules("en", {minimumFractionDigits: 2}).select(1)`);
add("exact", `new Intl.PluralRules("fr", {maximumFractionDigits: 0}).select(1.6)`);
add("exact", `new Intl.PluralRules("en").select(Infinity)`);
// Other locales.
for (const l of ["de", "fr", "ja"]) {
  for (const o of dtfOptions) add("locale", `new Intl.DateTimeFormat(${JSON.stringify(l)}, Object.assign({timeZone: "Europe/Paris"}, ${o})).format(new Date("2026-07-01T12:00:00Z"))`);
  add("locale", `(1234567.891).toLocaleString(${JSON.stringify(l)})`);
  add("locale", `new Intl.NumberFormat(${JSON.stringify(l)}, {style: "currency", currency: "EUR"}).format(1234.5)`);
  add("locale", `new Intl.NumberFormat(${JSON.stringify(l)}, {style: "percent"}).format(0.25)`);
  add("locale", `new Intl.ListFormat(${JSON.stringify(l)}).format(["a", "b", "c"])`);
  add("locale", `new Intl.RelativeTimeFormat(${JSON.stringify(l)}).format(-3, "day")`);
}
// Locale resolution: the locale each formatter reports (a default content
// locale is itself: de-DE; one the tables lack, its parent or en-US).
for (const t of ['"de-DE"', '"de-LU"', '"en"', '"en-US"', '"en-GB"', '"en-NZ"', '"fr-FR"', '"fr-BE"', '"es-ES"', '"es-AR"',
  '"pt-BR"', '"pt-AO"', '"zh"', '"zh-CN"', '"zh-TW"', '"zh-HK"', '"zh-Hant"', '"zh-Hans"', '"zh-Hant-TW"', '"nb-NO"', '"no"',
  '"nn"', '"ja-JP"', '"ko-KR"', '"xx"', '"und"', '"de-u-hc-h12"', '"en-US-u-nu-latn"', '"sv-FI"', '"it-CH"', '["xx", "de"]', '[]'])
  for (const C of ["DateTimeFormat", "NumberFormat", "RelativeTimeFormat", "ListFormat", "PluralRules", "Collator"])
    add("locale", `new Intl.${C}(${t}).resolvedOptions().locale`);
for (const C of ["DateTimeFormat", "NumberFormat", "RelativeTimeFormat", "ListFormat"])
  add("locale", `Intl.${C}.supportedLocalesOf(["de-DE", "xx", "zh-TW", "en-NZ", "nb-NO", "fr-CA", "de-u-hc-h12"])`);
add("locale", `Intl.getCanonicalLocales(["EN-us", "zh-hant-tw", "en-u-hc-h12-ca-gregory", "iw", "en-US-u-kn-true", "sr-latn-rs"])`);
for (const e of ["i-klingon", "root", "en--US", "x-abc", "en-US-u", "de-DE-1996-1996"])
  add("locale", `(() => { try { Intl.getCanonicalLocales(${JSON.stringify(e)}); return "no error" } catch (e) { return e.name } })()`);
add("locale", `new Intl.DateTimeFormat("de-u-hc-h12", {timeZone: "UTC", hour: "numeric"}).format(new Date("2026-01-01T15:00:00Z"))`);
add("locale", `new Intl.DateTimeFormat("de-u-hc-h12", {timeZone: "UTC", hour: "numeric", hourCycle: "h23"}).resolvedOptions().locale`);
add("locale", `new Intl.DateTimeFormat("ja", {timeZone: "UTC", hour: "numeric", hour12: true}).format(new Date("2026-01-01T00:30:00Z"))`);
add("locale", `new Intl.ListFormat("es").format(["agua", "hielo"])`);
add("locale", `new Intl.ListFormat("es", {type: "disjunction"}).format(["siete", "ocho"])`);
add("locale", `new Intl.RelativeTimeFormat("de", {numeric: "auto"}).format(-2, "day")`);
add("locale", `new Intl.NumberFormat("de-CH", {style: "currency", currency: "CHF"}).format(1234.5)`);
add("locale", `new Intl.NumberFormat("en-IN").format(123456789.5)`);
add("locale", `new Intl.NumberFormat("ja", {notation: "compact"}).format(123456789)`);
// ECMA-402's clocks for hour12 (Node 20 keeps V8's older h24 and h11),
// and an offset time zone, which Node 20 refuses: listed differences.
add("locale", `new Intl.DateTimeFormat("en-US", {timeZone: "UTC", hour: "numeric", minute: "numeric", hour12: false}).format(Date.UTC(2026, 0, 1, 0, 30))`);
add("locale", `new Intl.DateTimeFormat("de", {timeZone: "UTC", hour: "numeric", minute: "numeric", hour12: true}).format(Date.UTC(2026, 0, 1, 0, 30))`);
add("locale", `new Intl.DateTimeFormat("en-US", {timeZone: "+05:30", hour: "numeric", minute: "numeric"}).format(Date.UTC(2026, 0, 1, 0, 30))`);
add("exact", `[10n ** 40n, "1e400", "-1e-400", "1" + "0".repeat(400)].map(v => new Intl.NumberFormat("en-US").format(v))`);
add("exact", `["1234.5", " 12 ", "0x10", "Infinity", "-Infinity", "", "abc", "12345678901234567890.123456789", "1e3", "-0"].map(s => new Intl.NumberFormat("en-US").format(s))`);
// evaluate runs every case: its value as JSON, or "throws NAME".
function evaluate() {
  return cases.map(([group, expr]) => {
    let v;
    try { v = JSON.stringify((0, eval)(expr)) } catch (e) { v = "throws " + e.name + ": " + e.message }
    return [group, expr, v];
  });
}
