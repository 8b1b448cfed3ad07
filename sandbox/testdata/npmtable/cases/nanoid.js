import { customRandom, urlAlphabet } from "nanoid";
let seed = 1;
const random = (size) => {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) { seed = (seed * 16807) % 2147483647; bytes[i] = seed & 255; }
  return bytes;
};
const nanoid = customRandom(urlAlphabet, 10, random);
return [nanoid(), nanoid(), urlAlphabet.length];
