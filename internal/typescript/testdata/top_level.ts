// Top-level await and return in every position a step may use them.
declare const input: { mode: string };

const base = await Promise.resolve(40);
if (input.mode === "bare") return
if (input.mode === "semi") return;
if (input.mode === "comment") return /* nothing */;
if (input.mode === "block") { return { base } }
switch (input.mode) {
  case "switch":
    return "from switch";
}
for (const x of [1, 2]) {
  if (input.mode === "loop" && x === 2) return x;
}
try {
  if (input.mode === "try") return await Promise.resolve("from try");
} finally {
  base;
}
label: {
  if (input.mode === "label") break label;
}
const add = async (a: number) => a + (await Promise.resolve(2));
return (
  await add(base)
);
