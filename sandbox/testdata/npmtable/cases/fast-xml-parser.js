import { XMLParser, XMLBuilder, XMLValidator } from "fast-xml-parser";
const xml = `<?xml version="1.0"?><catalog><book id="bk101"><title>XML &amp; You</title><price>44.95</price></book><book id="bk102"><title>Go</title><price>5</price></book></catalog>`;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_" });
const obj = parser.parse(xml);
return {
  obj,
  valid: XMLValidator.validate(xml),
  invalid: XMLValidator.validate("<a><b></a>").err.code,
  built: new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: "@_" }).build({ root: { "@_x": "1", item: ["a", "b"] } }),
};
