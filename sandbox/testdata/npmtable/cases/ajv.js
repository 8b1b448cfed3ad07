import Ajv from "ajv";
const ajv = new Ajv({ allErrors: true });
const schema = {
  type: "object",
  properties: { foo: { type: "integer" }, bar: { type: "string", maxLength: 3 } },
  required: ["foo"],
  additionalProperties: false,
};
const validate = ajv.compile(schema);
return {
  ok: validate({ foo: 1, bar: "abc" }),
  bad: validate({ foo: 1.5, bar: "abcd", baz: 1 }),
  errors: validate.errors.map((e) => [e.instancePath, e.keyword, e.message]),
};
