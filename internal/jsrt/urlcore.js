// Stepbox guest bootstrap, a part: the URL parser URL and Request share,
// loaded with the first of them. It parses the URLs steps mostly write
// itself: an absolute http, https, ws, wss or ftp URL of printable ASCII
// without user info, escapes to make or dot segments, on a domain
// (fastURL), or a reference to one relative to such a base. It gives every
// other input to the WHATWG URL standard's full parser (urlparse.js),
// loaded then, and what it takes it parses as that parser would. Library
// code the step uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_urlcorePart(bridge) {
  const { ObjectFreeze } = bridge;
  function full() { return bridge.part("urlparse"); }

  // FAST: the schemes fastURL takes (the special ones but file), with their
  // default ports.
  const FAST = { __proto__: null, ftp: 21, http: 80, https: 443, ws: 80, wss: 443 };

  // fastURL returns the record of s on base (a record, or undefined), or
  // undefined for the full parser: s is all printable ASCII but the
  // backslash (so there is nothing to trim, drop or decode), and either an
  // absolute URL of a FAST scheme, "//", a host of letters, digits, ".",
  // "-" and "_" that does not end in a number (an IPv4 address) or start a
  // label with "xn--", an optional port, then a path, query and fragment
  // with no character their percent-encode sets change and no dot
  // segment; or, on a base of a FAST scheme, such a path, query or
  // fragment alone. The result is what the full parser gives for s.
  function fastURL(s, base) {
    const n = s.length;
    let colon = -1; // the scheme's end
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c <= 0x20 || c >= 0x7f || c === 0x5c) return undefined;
      if (colon < 0 && c === 0x3a) colon = i;
    }
    let scheme;
    if (colon > 0 && isScheme(s, colon)) {
      scheme = s.slice(0, colon).toLowerCase();
      if (!(scheme in FAST) || s.charCodeAt(colon + 1) !== 0x2f || s.charCodeAt(colon + 2) !== 0x2f || s.charCodeAt(colon + 3) === 0x2f) return undefined;
    } else if (base === undefined || !(base.scheme in FAST) || base.opaque || (s.charCodeAt(0) === 0x2f && s.charCodeAt(1) === 0x2f)) {
      return undefined;
    }
    // The parts' bounds: [a, e) the authority, then the path up to q,
    // the query up to h, the fragment.
    const a = scheme === undefined ? 0 : colon + 3;
    let e = a;
    if (scheme !== undefined) while (e < n && s[e] !== "/" && s[e] !== "?" && s[e] !== "#") e++;
    let h = s.indexOf("#", e);
    if (h < 0) h = n;
    let q = s.indexOf("?", e);
    if (q < 0 || q > h) q = h;
    const u = { scheme: "", username: "", password: "", host: null, port: null, path: null, opaque: false, query: null, fragment: null };
    if (scheme !== undefined) {
      u.scheme = scheme;
      let k = s.indexOf(":", a);
      if (k < 0 || k > e) k = e;
      if (!fastHost(s, a, k)) return undefined;
      u.host = s.slice(a, k).toLowerCase();
      if (k < e) {
        if (!isDigits(s, k + 1, e)) return undefined;
        if (k + 1 < e) {
          const port = parseInt(s.slice(k + 1, e), 10);
          if (port > 65535) return undefined;
          u.port = port === FAST[scheme] ? null : port;
        }
      }
      u.path = e < q ? fastPath(s, e + 1, q, []) : [""];
    } else {
      u.scheme = base.scheme; u.username = base.username; u.password = base.password; u.host = base.host; u.port = base.port;
      if (n === 0) {
        u.path = base.path.slice(); u.query = base.query;
        return u;
      }
      const c = s[0];
      if (c === "/") u.path = fastPath(s, 1, q, []);
      else if (c === "?" || c === "#") {
        u.path = base.path.slice();
        if (c === "#") u.query = base.query;
      } else u.path = fastPath(s, 0, q, base.path.slice(0, base.path.length - 1));
    }
    if (u.path === undefined) return undefined;
    if (q < h) {
      if (!clean(s, q + 1, h, "\"'<>")) return undefined;
      u.query = s.slice(q + 1, h);
    }
    if (h < n) {
      if (!clean(s, h + 1, n, "\"<>`")) return undefined;
      u.fragment = s.slice(h + 1);
    }
    return u;
  }
  function isScheme(s, end) {
    for (let i = 0; i < end; i++) {
      const c = s.charCodeAt(i) | 0x20;
      if (!(c >= 0x61 && c <= 0x7a) && (i === 0 || !((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e))) return false;
    }
    return true;
  }
  function isDigits(s, from, to) {
    for (let i = from; i < to; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return false;
    }
    return true;
  }
  // fastHost reports whether s[from, to) is a domain fastURL takes.
  function fastHost(s, from, to) {
    if (from === to) return false;
    let label = from, last = from; // the start of this label, and of the last one not empty
    for (let i = from; i <= to; i++) {
      const c = i < to ? s.charCodeAt(i) | 0x20 : 0x2e;
      if (c === 0x2e) {
        if (i > label) {
          if (i - label >= 4 && (s.charCodeAt(label) | 0x20) === 0x78 && (s.charCodeAt(label + 1) | 0x20) === 0x6e && s[label + 2] === "-" && s[label + 3] === "-") return false;
          last = label;
        }
        label = i + 1;
      } else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x7f)) {
        return false; // c | 0x20 is 0x7f for "_" (0x5f)
      }
    }
    const c = s.charCodeAt(last);
    return !(c >= 0x30 && c <= 0x39); // a last label that starts with a digit may be a number
  }
  // fastPath appends the segments of s[from, to) to path and returns it,
  // or returns undefined if one is a dot segment or has a character the
  // path percent-encode set changes.
  function fastPath(s, from, to, path) {
    if (!clean(s, from, to, "\"<>`{}")) return undefined;
    for (let i = from; ; ) {
      let j = s.indexOf("/", i);
      if (j < 0 || j > to) j = to;
      const seg = s.slice(i, j);
      if (seg.indexOf(".") >= 0 || seg.indexOf("%") >= 0) {
        const l = seg.toLowerCase();
        if (l === "." || l === ".." || l === "%2e" || l === ".%2e" || l === "%2e." || l === "%2e%2e") return undefined;
      }
      path[path.length] = seg;
      if (j === to) return path;
      i = j + 1;
    }
  }
  // clean reports whether s[from, to) has none of the characters in bad.
  function clean(s, from, to, bad) {
    for (let i = from; i < to; i++) if (bad.indexOf(s[i]) >= 0) return false;
    return true;
  }

  // parseURL is the basic URL parser without a state override: the record
  // of s on base (a record, or undefined), or null if it is not a URL.
  function parseURL(s, base) {
    const u = fastURL(s, base);
    if (u !== undefined) return u;
    const p = full();
    return p.parse(p.toUSV(s), base);
  }

  function serialize(u, excludeFragment) {
    let out = u.scheme + ":";
    if (u.host !== null) {
      out += "//";
      if (u.username !== "" || u.password !== "") {
        out += u.username;
        if (u.password !== "") out += ":" + u.password;
        out += "@";
      }
      out += u.host;
      if (u.port !== null) out += ":" + u.port;
    }
    if (u.host === null && !u.opaque && u.path.length > 1 && u.path[0] === "") out += "/.";
    out += serializePath(u);
    if (u.query !== null) out += "?" + u.query;
    if (!excludeFragment && u.fragment !== null) out += "#" + u.fragment;
    return out;
  }
  function serializePath(u) {
    if (u.opaque) return u.path;
    let out = "";
    for (let i = 0; i < u.path.length; i++) out += "/" + u.path[i];
    return out;
  }
  function origin(u) {
    if (u.scheme === "blob") {
      const inner = parseURL(serializePath(u));
      return inner !== null && (inner.scheme === "http" || inner.scheme === "https") ? origin(inner) : "null";
    }
    if (u.scheme === "ftp" || u.scheme === "http" || u.scheme === "https" || u.scheme === "ws" || u.scheme === "wss") {
      return u.scheme + "://" + u.host + (u.port === null ? "" : ":" + u.port);
    }
    return "null";
  }

  return ObjectFreeze({ __proto__: null, parseURL, serialize, serializePath, origin });
})
