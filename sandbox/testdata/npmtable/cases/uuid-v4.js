import { v4 as uuidv4, validate, version } from "uuid";
const id = uuidv4();
return [validate(id), version(id)];
