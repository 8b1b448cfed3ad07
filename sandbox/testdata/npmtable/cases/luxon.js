import { DateTime, Duration } from "luxon";
const dt = DateTime.fromISO("2026-07-01T12:00:00Z", { zone: "utc" });
return {
  paris: dt.setZone("Europe/Paris").toISO(),
  plus: dt.plus({ weeks: 1 }).toISODate(),
  format: dt.toFormat("yyyy LLL dd"),
  duration: Duration.fromObject({ hours: 2, minutes: 7 }).toFormat("hh:mm"),
};
