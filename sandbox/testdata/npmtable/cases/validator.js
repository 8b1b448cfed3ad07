import validator from "validator";
return {
  email: [validator.isEmail("foo@bar.com"), validator.isEmail("foo@bar")],
  url: validator.isURL("https://example.com/a?b=c"),
  uuid: validator.isUUID("a3bb189e-8bf9-3888-9912-ace4e6543002"),
  ip: [validator.isIP("192.168.0.1"), validator.isIP("::1", 6), validator.isIP("999.1.1.1")],
  escape: validator.escape("<b>'hi'</b>"),
  normalize: validator.normalizeEmail("Foo.Bar+tag@GMAIL.com"),
  trim: validator.trim("  x  "),
  iso: validator.isISO8601("2026-07-01T12:00:00Z"),
};
