import { z } from "zod";
const User = z.object({ name: z.string().min(2), age: z.number().int().positive(), email: z.string().email().optional() });
const bad = User.safeParse({ name: "A", age: -1, email: "nope" });
return {
  ok: User.parse({ name: "Ada", age: 36 }),
  success: bad.success,
  issues: bad.error.issues.map((i) => [i.path.join("."), i.code]),
  coerced: z.coerce.number().parse("42"),
  union: z.union([z.string(), z.number()]).safeParse(true).success,
};
