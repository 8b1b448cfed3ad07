interface Box<T> { value: T }
type Mapper<A, B> = (a: A) => B;

function map<T, U>(box: Box<T>, f: Mapper<T, U>): Box<U> {
  return { value: f(box.value) };
}
const identity = <T,>(x: T): T => x;
class Stack<T extends { id: number } = { id: number }> {
  private items: T[] = [];
  push(item: T): this { this.items.push(item); return this; }
  ids(): number[] { return this.items.map((i) => i.id); }
}
function first<const T extends readonly unknown[]>(xs: T): T[0] { return xs[0]; }

const s = new Stack<{ id: number; name: string }>().push({ id: 1, name: "a" }).push({ id: 2, name: "b" });
return { mapped: map<number, string>({ value: 2 }, (n) => `n=${n}`), same: identity<string>("x"), ids: s.ids(), first: first([7, 8] as const) };
