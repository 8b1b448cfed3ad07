import { nanoid } from "nanoid";
const id = nanoid();
return [id.length, /^[A-Za-z0-9_-]+$/.test(id)];
