// Stepbox guest bootstrap, a part: performance (now, timeOrigin), loaded
// when a step first reads it. performance.now() is the host's: the run's
// milliseconds, monotonic, coarsened to 100 µs (web.go). Library code the
// step uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_performancePart(bridge) {
  const { host, ObjectFreeze } = bridge;
  const timeOrigin = Date.now() - host("web", "now");
  return ObjectFreeze({
    __proto__: null,
    performance: ObjectFreeze({
      __proto__: null,
      now: function now() { return host("web", "now"); },
      timeOrigin: timeOrigin,
      toJSON: function toJSON() { return { timeOrigin: timeOrigin }; },
      [Symbol.toStringTag]: "Performance",
    }),
  });
})
