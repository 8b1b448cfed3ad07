// Stepbox guest bootstrap, a part: DOMException, loaded when a step first
// reads it or another part first throws one (its __sbx_dom). Library code
// the step uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_domPart(bridge) {
  const { StringCtor, ErrorCtor, ObjectFreeze } = bridge;

  // CODES: the legacy code of each name that has one, and the constant
  // that names it (as written, not computed at each load).
  const CODES = {
    __proto__: null,
    IndexSizeError: [1, "INDEX_SIZE_ERR"], HierarchyRequestError: [3, "HIERARCHY_REQUEST_ERR"],
    WrongDocumentError: [4, "WRONG_DOCUMENT_ERR"], InvalidCharacterError: [5, "INVALID_CHARACTER_ERR"],
    NoModificationAllowedError: [7, "NO_MODIFICATION_ALLOWED_ERR"], NotFoundError: [8, "NOT_FOUND_ERR"],
    NotSupportedError: [9, "NOT_SUPPORTED_ERR"], InvalidStateError: [11, "INVALID_STATE_ERR"],
    SyntaxError: [12, "SYNTAX_ERR"], InvalidModificationError: [13, "INVALID_MODIFICATION_ERR"],
    NamespaceError: [14, "NAMESPACE_ERR"], InvalidAccessError: [15, "INVALID_ACCESS_ERR"],
    TypeMismatchError: [17, "TYPE_MISMATCH_ERR"], SecurityError: [18, "SECURITY_ERR"],
    NetworkError: [19, "NETWORK_ERR"], AbortError: [20, "ABORT_ERR"], URLMismatchError: [21, "URL_MISMATCH_ERR"],
    QuotaExceededError: [22, "QUOTA_EXCEEDED_ERR"], TimeoutError: [23, "TIMEOUT_ERR"],
    InvalidNodeTypeError: [24, "INVALID_NODE_TYPE_ERR"], DataCloneError: [25, "DATA_CLONE_ERR"],
  };
  class DOMException extends ErrorCtor {
    #name; #message;
    constructor(message = "", options = "Error") {
      super();
      this.#message = StringCtor(message);
      let name = options;
      if (options !== null && typeof options === "object") {
        name = options.name === undefined ? "Error" : options.name;
        if ("cause" in options) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true });
      }
      this.#name = StringCtor(name);
      // The stack the Error constructor captured names the class; a
      // DOMException prints as its name.
      const stack = this.stack;
      if (typeof stack === "string") {
        const nl = stack.indexOf("\n");
        Object.defineProperty(this, "stack", { value: this.#name + ": " + this.#message + (nl < 0 ? "" : stack.slice(nl)), writable: true, configurable: true });
      }
    }
    get name() { return this.#name; }
    get message() { return this.#message; }
    get code() { const c = CODES[this.#name]; return c === undefined ? 0 : c[0]; }
  }
  Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
  {
    const names = Object.keys(CODES);
    const d = { __proto__: null, value: 0, enumerable: true }; // one descriptor for all, not one each
    for (let i = 0; i < names.length; i++) {
      const c = CODES[names[i]];
      d.value = c[0];
      Object.defineProperty(DOMException, c[1], d);
      Object.defineProperty(DOMException.prototype, c[1], d);
    }
  }

  return ObjectFreeze({
    __proto__: null,
    DOMException,
    // for the other parts, not a global
    __sbx_dom: function __sbx_dom(message, name) { return new DOMException(message, name); },
  });
})
