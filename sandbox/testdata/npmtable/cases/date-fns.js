import { format, addDays, differenceInCalendarDays, parseISO, isValid, formatDistanceStrict, eachDayOfInterval } from "date-fns";
const d = parseISO("2026-07-01T12:00:00Z");
return {
  format: format(addDays(d, 3), "yyyy-MM-dd EEEE"),
  diff: differenceInCalendarDays(new Date(2026, 11, 25), d),
  valid: [isValid(d), isValid(parseISO("nope"))],
  distance: formatDistanceStrict(d, addDays(d, 40)),
  days: eachDayOfInterval({ start: d, end: addDays(d, 2) }).map((x) => format(x, "d MMM")),
};
