// 10,000 dates formatted in a time zone with Intl.DateTimeFormat.
const f = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", dateStyle: "medium", timeStyle: "short" });
let n = 0;
for (let i = 0; i < 10000; i++) n += f.format(new Date(Date.UTC(2026, 0, 1) + i * 3600000)).length;
return n;
