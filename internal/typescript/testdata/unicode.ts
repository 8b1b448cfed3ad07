// Non-ASCII text: "é" is one code point, "😀" is one code point but two UTF-16 units.
const greeting = "héllo 😀";
const tagged = String.raw`raw 😀 ${greeting}`; /* 😀 comment */ const after = 1;
return { greeting, tagged, after };
