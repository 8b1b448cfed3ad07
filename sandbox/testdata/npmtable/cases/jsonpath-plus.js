import { JSONPath } from "jsonpath-plus";
const json = {
  store: {
    book: [
      { category: "reference", author: "Nigel Rees", title: "Sayings", price: 8.95 },
      { category: "fiction", author: "Evelyn Waugh", title: "Sword", price: 12.99 },
      { category: "fiction", author: "Herman Melville", title: "Moby Dick", isbn: "0-553", price: 8.99 },
    ],
    bicycle: { color: "red", price: 19.95 },
  },
};
return {
  authors: JSONPath({ path: "$.store.book[*].author", json }),
  cheap: JSONPath({ path: "$..book[?(@.price < 10)].title", json }),
  isbn: JSONPath({ path: "$..book[?(@.isbn)].title", json }),
  last: JSONPath({ path: "$..book[-1:].title", json }),
  paths: JSONPath({ path: "$.store.*", json, resultType: "path" }),
};
