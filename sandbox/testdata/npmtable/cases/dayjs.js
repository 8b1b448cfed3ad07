import dayjs from "dayjs";
const d = dayjs("2026-07-01T12:00:00Z");
return {
  format: d.format("YYYY-MM-DD HH:mm:ss dddd"),
  add: d.add(1, "month").startOf("month").toISOString(),
  diff: dayjs("2026-12-25").diff(d, "day"),
  isBefore: d.isBefore(dayjs("2027-01-01")),
  isDayjs: dayjs.isDayjs(d),
};
