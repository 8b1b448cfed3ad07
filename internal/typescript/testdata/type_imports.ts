import type { Request } from "./types";
import { type Response, helper } from "simple-statistics";
import { OnlyUsedAsType } from "./model";
import * as ss from "simple-statistics";
import "./side-effect";
import type * as T from "./types";

const req: Request = { id: 1 } as Request;
let res: Response | OnlyUsedAsType | T.Other | undefined;
return { mean: ss.mean([1, 2, 3]), h: helper(req), res };
