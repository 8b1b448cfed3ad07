enum Level { Low = 1, High = 10 }
const n: number = input?.n ?? 2;

function check(v: number): number {
  if (v > 100) throw new Error(`too big: ${v}`);
  return v * Level.High;
}
return check(n);
