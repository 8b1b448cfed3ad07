interface User { name?: string; address?: { city?: string }; tags?: string[]; greet?(): string }

const users: (User | undefined)[] = [{ name: "a", address: { city: "Oslo" }, tags: ["x"] }, {}, undefined];
const out = users.map((u) => ({
  city: u?.address?.city ?? "unknown",
  tag: u?.tags?.[0],
  greet: u?.greet?.(),
}));
let n: number | null = null;
n ??= 5;
n ||= 6;
n &&= n + 1;
return { out, n, big: String(1_000_000n * 2n), exp: 2 ** 10 };
