type Config = Record<string, number | string>;

const config = { retries: 3, mode: "fast" } satisfies Config;
const modes = ["fast", "slow"] as const;
type Mode = (typeof modes)[number];
const pick = (m: Mode): Mode => m;
const point = <const>{ x: 1, y: 2 };
const n = (config.retries as unknown) as number;
const el = (globalThis as { document?: { body?: string } }).document?.body!;

return { retries: n, mode: pick(config.mode as Mode), modes, point, el };
