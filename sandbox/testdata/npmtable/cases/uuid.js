import { v5 as uuidv5, validate, version, parse, stringify, NIL } from "uuid";
const id = uuidv5("hello.example.com", uuidv5.DNS);
return {
  v5: id,
  url: uuidv5("https://www.w3.org/", uuidv5.URL),
  valid: [validate(id), validate("not-a-uuid"), validate(NIL)],
  version: version(id),
  roundTrip: stringify(parse(id)) === id,
};
