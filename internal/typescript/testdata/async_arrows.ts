const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const fetchAll = async <T,>(items: T[], f: (t: T) => Promise<T>): Promise<T[]> => Promise.all(items.map(f));
const twice = async (n: number) => n * 2;
async function* gen() { yield 1; yield 2; }

const doubled = await fetchAll([1, 2, 3], twice);
let sum = 0;
for await (const v of gen()) sum += v;
return { doubled, sum, sleep: typeof sleep };
