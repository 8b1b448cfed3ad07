// A trivial run that first uses Intl: one number and one date formatted.
const n = new Intl.NumberFormat("en-US", { style: "currency", currency: "EUR" }).format(1234.5);
const d = new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" });
return n + " " + d;
