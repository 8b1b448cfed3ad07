const a: number = 1;
const b = (;
