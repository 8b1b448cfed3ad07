// Stepbox guest bootstrap, a part: URL and URLSearchParams, the WHATWG
// URL standard's parser (special schemes, IPv4 and IPv6 hosts, the
// percent-encode sets, state overrides for the setters). Domain names that
// are not plain ASCII go to the host's IDNA (golang.org/x/net/idna, UTS #46
// as the standard asks). Loaded when a step first reads URL or
// URLSearchParams; library code the step uses (doc.go, "The web platform's
// globals").
"use strict";
(function __sbx_urlPart(bridge) {
  const { host, ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor, SymbolIterator } = bridge;
  // text.js's UTF-8 codec, loaded when a URL first needs it: an ASCII host
  // without escapes does not.
  function utf8(s) { return bridge.part("text").__sbx_utf8(s); }
  function utf8decode(b) { return bridge.part("text").__sbx_utf8decode(b); }
  const NOT_PLAIN = /[^\x00-\x7f]|%/;

  const SPECIAL = { __proto__: null, ftp: 21, file: null, http: 80, https: 443, ws: 80, wss: 443 };
  const HEXU = "0123456789ABCDEF";

  // The percent-encode sets, as tests of a code point (a number). The path
  // set leaves ^ as it is, as Node 20 (ada) and the browsers do.
  const SET_C0 = (c) => c < 0x20 || c > 0x7e;
  const SET_FRAGMENT = (c) => SET_C0(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
  const SET_QUERY = (c) => SET_C0(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
  const SET_SPECIAL_QUERY = (c) => SET_QUERY(c) || c === 0x27;
  const SET_PATH = (c) => SET_QUERY(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
  const SET_USERINFO = (c) => SET_PATH(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d || c === 0x40 || (c >= 0x5b && c <= 0x5e) || c === 0x7c;
  const SET_COMPONENT = (c) => SET_USERINFO(c) || (c >= 0x24 && c <= 0x26) || c === 0x2b || c === 0x2c;
  const SET_FORM = (c) => SET_COMPONENT(c) || c === 0x21 || (c >= 0x27 && c <= 0x29) || c === 0x7e;

  // encode percent-encodes the code points of s in set (spaceAsPlus: the
  // form encoding's).
  function encode(s, set, spaceAsPlus) {
    let out = "";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (spaceAsPlus && c === 0x20) out += "+";
        else if (set(c)) out += "%" + HEXU[c >> 4] + HEXU[c & 15];
        else out += s[i];
        continue;
      }
      let j = i + 1;
      while (j < s.length && s.charCodeAt(j) >= 0x80) j++;
      const b = utf8(s.slice(i, j));
      for (let k = 0; k < b.length; k++) out += "%" + HEXU[b[k] >> 4] + HEXU[b[k] & 15];
      i = j - 1;
    }
    return out;
  }
  function hexValue(c) {
    if (c >= 48 && c <= 57) return c - 48;
    if (c >= 65 && c <= 70) return c - 55;
    if (c >= 97 && c <= 102) return c - 87;
    return -1;
  }
  // percentDecode returns the bytes of s (UTF-8) with %XX decoded.
  function percentDecode(s, plusAsSpace) {
    const b = utf8(s);
    const out = new Uint8Array(b.length);
    let k = 0;
    for (let i = 0; i < b.length; i++) {
      const c = b[i];
      if (c === 0x25 && i + 2 < b.length + 0 && hexValue(b[i + 1]) >= 0 && hexValue(b[i + 2]) >= 0) {
        out[k++] = hexValue(b[i + 1]) * 16 + hexValue(b[i + 2]);
        i += 2;
      } else out[k++] = plusAsSpace && c === 0x2b ? 0x20 : c;
    }
    return out.subarray(0, k);
  }

  const isAlpha = (c) => c !== undefined && /^[A-Za-z]$/.test(c);
  const isDigit = (c) => c !== undefined && c >= "0" && c <= "9";
  const isHex = (c) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
  const isDrive = (s) => s.length === 2 && isAlpha(s[0]) && (s[1] === ":" || s[1] === "|");
  const isNormalizedDrive = (s) => s.length === 2 && isAlpha(s[0]) && s[1] === ":";
  function startsWithDrive(cps, p) {
    return cps.length - p >= 2 && isAlpha(cps[p]) && (cps[p + 1] === ":" || cps[p + 1] === "|") &&
      (cps.length - p === 2 || "/\\?#".includes(cps[p + 2]));
  }
  const isSingleDot = (s) => s === "." || s.toLowerCase() === "%2e";
  const isDoubleDot = (s) => { s = s.toLowerCase(); return s === ".." || s === ".%2e" || s === "%2e." || s === "%2e%2e"; };

  // ---- hosts ------------------------------------------------------------------

  const FORBIDDEN_HOST = /[\u0000\t\n\r #/:<>?@[\\\]^|]/;
  const FORBIDDEN_DOMAIN = /[\u0000-\u001f #/:<>?@[\\\]^|%\u007f]/;

  function parseHost(input, opaque) {
    if (input[0] === "[") {
      if (input[input.length - 1] !== "]") return null;
      const a = parseIPv6(input.slice(1, -1));
      return a === null ? null : "[" + serializeIPv6(a) + "]";
    }
    if (opaque) {
      if (FORBIDDEN_HOST.test(input)) return null;
      return encode(input, SET_C0, false);
    }
    const domain = NOT_PLAIN.test(input) ? utf8decode(percentDecode(input, false)) : input;
    const ascii = domainToASCII(domain);
    if (ascii === null || ascii === "" || FORBIDDEN_DOMAIN.test(ascii)) return null;
    if (endsInNumber(ascii)) {
      const v4 = parseIPv4(ascii);
      return v4 === null ? null : serializeIPv4(v4);
    }
    return ascii;
  }

  function domainToASCII(domain) {
    if (/^[\u0000-\u007f]*$/.test(domain)) {
      const lower = domain.toLowerCase();
      if (!/(^|\.)xn--/.test(lower)) return lower;
    }
    try {
      return host("web", "idna", domain);
    } catch (_) {
      return null;
    }
  }

  function endsInNumber(s) {
    const parts = s.split(".");
    if (parts[parts.length - 1] === "") {
      if (parts.length === 1) return false;
      parts.pop();
    }
    const last = parts[parts.length - 1];
    if (last !== "" && /^[0-9]+$/.test(last)) return true;
    return parseIPv4Number(last) !== null;
  }
  function parseIPv4Number(s) {
    if (s === "") return null;
    let radix = 10;
    if (s.length >= 2 && (s.startsWith("0x") || s.startsWith("0X"))) { radix = 16; s = s.slice(2); }
    else if (s.length >= 2 && s[0] === "0") { radix = 8; s = s.slice(1); }
    if (s === "") return 0;
    const ok = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9A-Fa-f]+$/ : /^[0-7]+$/;
    if (!ok.test(s)) return null;
    return parseInt(s, radix);
  }
  function parseIPv4(s) {
    const parts = s.split(".");
    if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop();
    if (parts.length > 4) return null;
    const n = [];
    for (let i = 0; i < parts.length; i++) {
      const v = parseIPv4Number(parts[i]);
      if (v === null) return null;
      n.push(v);
    }
    for (let i = 0; i < n.length - 1; i++) if (n[i] > 255) return null;
    if (n[n.length - 1] >= 256 ** (5 - n.length)) return null;
    let ip = n[n.length - 1];
    for (let i = 0; i < n.length - 1; i++) ip += n[i] * 256 ** (3 - i);
    return ip;
  }
  function serializeIPv4(ip) {
    const out = [];
    for (let i = 0; i < 4; i++) { out.unshift(StringCtor(ip % 256)); ip = Math.floor(ip / 256); }
    return out.join(".");
  }
  function parseIPv6(s) {
    const a = [0, 0, 0, 0, 0, 0, 0, 0];
    let piece = 0, compress = null, p = 0;
    const at = (i) => s[i];
    if (at(p) === ":") {
      if (at(p + 1) !== ":") return null;
      p += 2; piece++; compress = piece;
    }
    while (at(p) !== undefined) {
      if (piece === 8) return null;
      if (at(p) === ":") {
        if (compress !== null) return null;
        p++; piece++; compress = piece;
        continue;
      }
      let value = 0, length = 0;
      while (length < 4 && isHex(at(p))) { value = value * 16 + parseInt(at(p), 16); p++; length++; }
      if (at(p) === ".") {
        if (length === 0) return null;
        p -= length;
        if (piece > 6) return null;
        let seen = 0;
        while (at(p) !== undefined) {
          let v4 = null;
          if (seen > 0) {
            if (at(p) === "." && seen < 4) p++;
            else return null;
          }
          if (!isDigit(at(p))) return null;
          while (isDigit(at(p))) {
            const n = +at(p);
            if (v4 === null) v4 = n;
            else if (v4 === 0) return null;
            else v4 = v4 * 10 + n;
            if (v4 > 255) return null;
            p++;
          }
          a[piece] = a[piece] * 0x100 + v4;
          seen++;
          if (seen === 2 || seen === 4) piece++;
        }
        if (seen !== 4) return null;
        break;
      } else if (at(p) === ":") {
        p++;
        if (at(p) === undefined) return null;
      } else if (at(p) !== undefined) return null;
      a[piece] = value;
      piece++;
    }
    if (compress !== null) {
      let swaps = piece - compress;
      piece = 7;
      while (piece !== 0 && swaps > 0) {
        const t = a[piece]; a[piece] = a[compress + swaps - 1]; a[compress + swaps - 1] = t;
        piece--; swaps--;
      }
    } else if (piece !== 8) return null;
    return a;
  }
  function serializeIPv6(a) {
    let best = -1, bestLen = 1;
    for (let i = 0; i < 8;) {
      if (a[i] !== 0) { i++; continue; }
      let j = i;
      while (j < 8 && a[j] === 0) j++;
      if (j - i > bestLen) { best = i; bestLen = j - i; }
      i = j;
    }
    let out = "";
    for (let i = 0; i < 8; i++) {
      if (i === best) { out += i === 0 ? "::" : ":"; i += bestLen - 1; continue; }
      out += a[i].toString(16) + (i < 7 ? ":" : "");
    }
    return out;
  }

  // ---- the basic URL parser ------------------------------------------------

  const SCHEME_START = 1, SCHEME = 2, NO_SCHEME = 3, SPECIAL_RELATIVE_OR_AUTHORITY = 4,
    PATH_OR_AUTHORITY = 5, RELATIVE = 6, RELATIVE_SLASH = 7, SPECIAL_AUTHORITY_SLASHES = 8,
    SPECIAL_AUTHORITY_IGNORE_SLASHES = 9, AUTHORITY = 10, HOST = 11, HOSTNAME = 12, PORT = 13,
    FILE = 14, FILE_SLASH = 15, FILE_HOST = 16, PATH_START = 17, PATH = 18, OPAQUE_PATH = 19,
    QUERY = 20, FRAGMENT = 21;
  const FAILURE = null;

  function newRecord() {
    return { scheme: "", username: "", password: "", host: null, port: null, path: [], opaque: false, query: null, fragment: null };
  }
  const special = (u) => u.scheme in SPECIAL;
  function shorten(u) {
    if (u.scheme === "file" && u.path.length === 1 && isNormalizedDrive(u.path[0])) return;
    u.path.pop();
  }
  function copyRecord(u) {
    const c = newRecord();
    c.scheme = u.scheme; c.username = u.username; c.password = u.password; c.host = u.host;
    c.port = u.port; c.path = u.opaque ? u.path : u.path.slice(); c.opaque = u.opaque;
    c.query = u.query; c.fragment = u.fragment;
    return c;
  }

  // parse is the basic URL parser: the record, FAILURE, or (with a state
  // override) url itself, changed or not.
  function parse(input, base, url, override) {
    if (url === undefined) {
      url = newRecord();
      input = input.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
    }
    input = input.replace(/[\t\n\r]/g, "");
    let state = override || SCHEME_START;
    let buffer = "", atSign = false, inBrackets = false, passwordToken = false;
    const cps = Array.from(input);
    const rest = (p) => cps.slice(p + 1).join("");
    for (let p = 0; ; p++) {
      const c = cps[p]; // undefined: the end
      switch (state) {
        case SCHEME_START:
          if (isAlpha(c)) { buffer += c.toLowerCase(); state = SCHEME; }
          else if (!override) { state = NO_SCHEME; p--; }
          else return FAILURE;
          break;
        case SCHEME:
          if (isAlpha(c) || isDigit(c) || c === "+" || c === "-" || c === ".") buffer += c.toLowerCase();
          else if (c === ":") {
            if (override) {
              if ((url.scheme in SPECIAL) !== (buffer in SPECIAL)) return url;
              if ((url.username !== "" || url.password !== "" || url.port !== null) && buffer === "file") return url;
              if (url.scheme === "file" && url.host === "") return url;
            }
            url.scheme = buffer;
            if (override) {
              if (url.port === SPECIAL[url.scheme]) url.port = null;
              return url;
            }
            buffer = "";
            if (url.scheme === "file") state = FILE;
            else if (special(url) && base && base.scheme === url.scheme) state = SPECIAL_RELATIVE_OR_AUTHORITY;
            else if (special(url)) state = SPECIAL_AUTHORITY_SLASHES;
            else if (cps[p + 1] === "/") { state = PATH_OR_AUTHORITY; p++; }
            else { url.path = ""; url.opaque = true; state = OPAQUE_PATH; }
          } else if (!override) { buffer = ""; state = NO_SCHEME; p = -1; }
          else return FAILURE;
          break;
        case NO_SCHEME:
          if (!base || (base.opaque && c !== "#")) return FAILURE;
          if (base.opaque && c === "#") {
            url.scheme = base.scheme; url.path = base.path; url.opaque = true; url.query = base.query;
            url.fragment = ""; state = FRAGMENT;
          } else if (base.scheme !== "file") { state = RELATIVE; p--; }
          else { state = FILE; p--; }
          break;
        case SPECIAL_RELATIVE_OR_AUTHORITY:
          if (c === "/" && cps[p + 1] === "/") { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p++; }
          else { state = RELATIVE; p--; }
          break;
        case PATH_OR_AUTHORITY:
          if (c === "/") state = AUTHORITY;
          else { state = PATH; p--; }
          break;
        case RELATIVE:
          url.scheme = base.scheme;
          if (c === "/") state = RELATIVE_SLASH;
          else if (special(url) && c === "\\") state = RELATIVE_SLASH;
          else {
            url.username = base.username; url.password = base.password; url.host = base.host;
            url.port = base.port; url.path = base.path.slice(); url.query = base.query;
            if (c === "?") { url.query = ""; state = QUERY; }
            else if (c === "#") { url.fragment = ""; state = FRAGMENT; }
            else if (c !== undefined) { url.query = null; shorten(url); state = PATH; p--; }
          }
          break;
        case RELATIVE_SLASH:
          if (special(url) && (c === "/" || c === "\\")) state = SPECIAL_AUTHORITY_IGNORE_SLASHES;
          else if (c === "/") state = AUTHORITY;
          else {
            url.username = base.username; url.password = base.password; url.host = base.host;
            url.port = base.port; state = PATH; p--;
          }
          break;
        case SPECIAL_AUTHORITY_SLASHES:
          if (c === "/" && cps[p + 1] === "/") { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p++; }
          else { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p--; }
          break;
        case SPECIAL_AUTHORITY_IGNORE_SLASHES:
          if (c !== "/" && c !== "\\") { state = AUTHORITY; p--; }
          break;
        case AUTHORITY:
          if (c === "@") {
            if (atSign) buffer = "%40" + buffer;
            atSign = true;
            const bcps = Array.from(buffer);
            for (let i = 0; i < bcps.length; i++) {
              if (bcps[i] === ":" && !passwordToken) { passwordToken = true; continue; }
              const enc = encode(bcps[i], SET_USERINFO, false);
              if (passwordToken) url.password += enc; else url.username += enc;
            }
            buffer = "";
          } else if (c === undefined || c === "/" || c === "?" || c === "#" || (special(url) && c === "\\")) {
            if (atSign && buffer === "") return FAILURE;
            p -= Array.from(buffer).length + 1;
            buffer = "";
            state = HOST;
          } else buffer += c;
          break;
        case HOST:
        case HOSTNAME:
          if (override && url.scheme === "file") { p--; state = FILE_HOST; }
          else if (c === ":" && !inBrackets) {
            if (buffer === "") return FAILURE;
            if (override === HOSTNAME) return FAILURE;
            const h = parseHost(buffer, !special(url));
            if (h === null) return FAILURE;
            url.host = h; buffer = ""; state = PORT;
          } else if (c === undefined || c === "/" || c === "?" || c === "#" || (special(url) && c === "\\")) {
            p--;
            if (special(url) && buffer === "") return FAILURE;
            else if (override && buffer === "" && (url.username !== "" || url.password !== "" || url.port !== null)) return url;
            const h = parseHost(buffer, !special(url));
            if (h === null) return FAILURE;
            url.host = h; buffer = ""; state = PATH_START;
            if (override) return url;
          } else {
            if (c === "[") inBrackets = true;
            if (c === "]") inBrackets = false;
            buffer += c;
          }
          break;
        case PORT:
          if (isDigit(c)) buffer += c;
          else if (c === undefined || c === "/" || c === "?" || c === "#" || (special(url) && c === "\\") || override) {
            if (buffer !== "") {
              const port = parseInt(buffer, 10);
              if (port > 65535) return FAILURE;
              url.port = SPECIAL[url.scheme] === port ? null : port;
              buffer = "";
              if (override) return url;
            }
            if (override) return FAILURE;
            state = PATH_START; p--;
          } else return FAILURE;
          break;
        case FILE:
          url.scheme = "file";
          url.host = "";
          if (c === "/" || c === "\\") state = FILE_SLASH;
          else if (base && base.scheme === "file") {
            url.host = base.host; url.path = base.path.slice(); url.query = base.query;
            if (c === "?") { url.query = ""; state = QUERY; }
            else if (c === "#") { url.fragment = ""; state = FRAGMENT; }
            else if (c !== undefined) {
              url.query = null;
              if (!startsWithDrive(cps, p)) shorten(url);
              else url.path = [];
              state = PATH; p--;
            }
          } else { state = PATH; p--; }
          break;
        case FILE_SLASH:
          if (c === "/" || c === "\\") state = FILE_HOST;
          else {
            if (base && base.scheme === "file") {
              url.host = base.host;
              if (!startsWithDrive(cps, p) && base.path.length > 0 && isNormalizedDrive(base.path[0])) url.path.push(base.path[0]);
            }
            state = PATH; p--;
          }
          break;
        case FILE_HOST:
          if (c === undefined || c === "/" || c === "\\" || c === "?" || c === "#") {
            p--;
            if (!override && isDrive(buffer)) state = PATH;
            else if (buffer === "") {
              url.host = "";
              if (override) return url;
              state = PATH_START;
            } else {
              let h = parseHost(buffer, false);
              if (h === null) return FAILURE;
              if (h === "localhost") h = "";
              url.host = h;
              if (override) return url;
              buffer = ""; state = PATH_START;
            }
          } else buffer += c;
          break;
        case PATH_START:
          if (special(url)) {
            state = PATH;
            if (c !== "/" && c !== "\\") p--;
          } else if (!override && c === "?") { url.query = ""; state = QUERY; }
          else if (!override && c === "#") { url.fragment = ""; state = FRAGMENT; }
          else if (c !== undefined) { state = PATH; if (c !== "/") p--; }
          else if (override && url.host === null) url.path.push("");
          break;
        case PATH:
          if (c === undefined || c === "/" || (special(url) && c === "\\") || (!override && (c === "?" || c === "#"))) {
            if (isDoubleDot(buffer)) {
              shorten(url);
              if (c !== "/" && !(special(url) && c === "\\")) url.path.push("");
            } else if (isSingleDot(buffer) && c !== "/" && !(special(url) && c === "\\")) url.path.push("");
            else if (!isSingleDot(buffer)) {
              if (url.scheme === "file" && url.path.length === 0 && isDrive(buffer)) buffer = buffer[0] + ":";
              url.path.push(buffer);
            }
            buffer = "";
            if (c === "?") { url.query = ""; state = QUERY; }
            if (c === "#") { url.fragment = ""; state = FRAGMENT; }
          } else buffer += encode(c, SET_PATH, false);
          break;
        case OPAQUE_PATH:
          if (c === "?") { url.query = ""; state = QUERY; }
          else if (c === "#") { url.fragment = ""; state = FRAGMENT; }
          else if (c !== undefined) url.path += encode(c, SET_C0, false);
          break;
        case QUERY:
          if ((!override && c === "#") || c === undefined) {
            url.query += encode(buffer, special(url) ? SET_SPECIAL_QUERY : SET_QUERY, false);
            buffer = "";
            if (c === "#") { url.fragment = ""; state = FRAGMENT; }
          } else buffer += c;
          break;
        case FRAGMENT:
          if (c !== undefined) url.fragment += encode(c, SET_FRAGMENT, false);
          break;
      }
      if (p >= cps.length) break;
    }
    return url;
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
      const inner = parse(serializePath(u));
      return inner !== null && (inner.scheme === "http" || inner.scheme === "https") ? origin(inner) : "null";
    }
    if (u.scheme in SPECIAL && u.scheme !== "file") return u.scheme + "://" + u.host + (u.port === null ? "" : ":" + u.port);
    return "null";
  }

  // ---- URLSearchParams --------------------------------------------------------

  function parseForm(s) {
    const out = [];
    const seqs = s.split("&");
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i];
      if (seq === "") continue;
      const eq = seq.indexOf("=");
      const name = eq < 0 ? seq : seq.slice(0, eq), value = eq < 0 ? "" : seq.slice(eq + 1);
      out.push([utf8decode(percentDecode(name, true)), utf8decode(percentDecode(value, true))]);
    }
    return out;
  }
  function serializeForm(list) {
    let out = "";
    for (let i = 0; i < list.length; i++) {
      out += (i > 0 ? "&" : "") + encode(toUSV(list[i][0]), SET_FORM, true) + "=" + encode(toUSV(list[i][1]), SET_FORM, true);
    }
    return out;
  }
  // toUSV replaces lone surrogates by U+FFFD (what USVString arguments get).
  function toUSV(s) {
    s = StringCtor(s);
    return /[\ud800-\udfff]/.test(s) ? s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd") : s;
  }

  let paramsOf, paramsUpdate;
  class URLSearchParams {
    #list = [];
    #url = null; // the URL record whose query this is, if any
    constructor(init = "") {
      if (init !== null && typeof init === "object" || typeof init === "function") {
        if (typeof init[SymbolIterator] === "function") {
          for (const pair of init) {
            const p = Array.from(pair);
            if (p.length !== 2) throw new TypeErrorCtor("URLSearchParams: each pair must have exactly two items");
            this.#list.push([toUSV(p[0]), toUSV(p[1])]);
          }
        } else {
          const keys = Reflect.ownKeys(init);
          for (let i = 0; i < keys.length; i++) {
            const d = Object.getOwnPropertyDescriptor(init, keys[i]);
            if (d !== undefined && d.enumerable && typeof keys[i] === "string") this.#list.push([toUSV(keys[i]), toUSV(init[keys[i]])]);
          }
        }
      } else {
        let s = toUSV(init);
        if (s[0] === "?") s = s.slice(1);
        this.#list = parseForm(s);
      }
    }
    #update() {
      if (this.#url === null) return;
      const s = serializeForm(this.#list);
      this.#url.query = s === "" ? null : s;
    }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([toUSV(name), toUSV(value)]); this.#update(); }
    delete(name, value = undefined) {
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      this.#list = this.#list.filter((e) => !(e[0] === name && (v === undefined || e[1] === v)));
      this.#update();
    }
    get(name) { name = toUSV(name); const e = this.#list.find((e) => e[0] === name); return e === undefined ? null : e[1]; }
    getAll(name) { name = toUSV(name); return this.#list.filter((e) => e[0] === name).map((e) => e[1]); }
    has(name, value = undefined) {
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      return this.#list.some((e) => e[0] === name && (v === undefined || e[1] === v));
    }
    set(name, value) {
      name = toUSV(name); value = toUSV(value);
      const i = this.#list.findIndex((e) => e[0] === name);
      if (i < 0) this.#list.push([name, value]);
      else {
        this.#list[i] = [name, value];
        this.#list = this.#list.filter((e, j) => j <= i || e[0] !== name);
      }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units (the default comparison).
      const l = this.#list.map((e, i) => [e, i]);
      l.sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]));
      this.#list = l.map((x) => x[0]);
      this.#update();
    }
    forEach(fn, thisArg = undefined) {
      if (typeof fn !== "function") throw new TypeErrorCtor("URLSearchParams.forEach: the callback must be a function");
      for (let i = 0; i < this.#list.length; i++) ReflectApply(fn, thisArg, [this.#list[i][1], this.#list[i][0], this]);
    }
    *entries() { for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]]; }
    *keys() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0]; }
    *values() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1]; }
    [SymbolIterator]() { return this.entries(); }
    toString() { return serializeForm(this.#list); }
    static {
      paramsOf = function __sbx_paramsOf(record) {
        const p = new URLSearchParams();
        p.#url = record;
        p.#list = record.query === null ? [] : parseForm(record.query);
        return p;
      };
      paramsUpdate = function __sbx_paramsUpdate(p, record) {
        p.#url = record;
        p.#list = record.query === null ? [] : parseForm(record.query);
      };
    }
  }
  Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });

  // ---- URL ------------------------------------------------------------------

  function invalid(input) {
    const e = new TypeErrorCtor("Invalid URL: " + input);
    e.code = "ERR_INVALID_URL";
    e.input = input;
    return e;
  }
  function parseWithBase(url, base) {
    let b;
    if (base !== undefined) {
      b = parse(toUSV(base));
      if (b === null) return null;
    }
    return parse(toUSV(url), b);
  }

  class URL {
    #u; #params = null;
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("URL: 1 argument required, but only 0 present");
      const u = parseWithBase(url, base);
      if (u === null) throw invalid(StringCtor(url));
      this.#u = u;
    }
    static canParse(url, base = undefined) { return parseWithBase(url, base) !== null; }
    static parse(url, base = undefined) {
      const u = parseWithBase(url, base);
      if (u === null) return null;
      return new URL(serialize(u, false));
    }
    get href() { return serialize(this.#u, false); }
    set href(v) {
      v = toUSV(v);
      const u = parse(v);
      if (u === null) throw invalid(v);
      this.#u = u;
      if (this.#params !== null) paramsUpdate(this.#params, u);
    }
    get origin() { return origin(this.#u); }
    get protocol() { return this.#u.scheme + ":"; }
    set protocol(v) { parse(toUSV(v) + ":", undefined, this.#u, SCHEME_START); }
    get username() { return this.#u.username; }
    set username(v) {
      const u = this.#u;
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      u.username = encode(toUSV(v), SET_USERINFO, false);
    }
    get password() { return this.#u.password; }
    set password(v) {
      const u = this.#u;
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      u.password = encode(toUSV(v), SET_USERINFO, false);
    }
    get host() {
      const u = this.#u;
      if (u.host === null) return "";
      return u.port === null ? u.host : u.host + ":" + u.port;
    }
    set host(v) { this.#setWith(v, HOST); }
    get hostname() { return this.#u.host === null ? "" : this.#u.host; }
    set hostname(v) { this.#setWith(v, HOSTNAME); }
    get port() { return this.#u.port === null ? "" : StringCtor(this.#u.port); }
    set port(v) {
      const u = this.#u;
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      v = toUSV(v);
      if (v === "") { u.port = null; return; }
      this.#setWith(v, PORT);
    }
    get pathname() { return serializePath(this.#u); }
    set pathname(v) {
      const u = this.#u;
      if (u.opaque) return;
      const c = copyRecord(u);
      c.path = [];
      if (parse(toUSV(v), undefined, c, PATH_START) !== null) this.#u.path = c.path;
    }
    get search() { const q = this.#u.query; return q === null || q === "" ? "" : "?" + q; }
    set search(v) {
      const u = this.#u;
      v = toUSV(v);
      if (v === "") u.query = null;
      else {
        if (v[0] === "?") v = v.slice(1);
        u.query = "";
        parse(v, undefined, u, QUERY);
      }
      if (this.#params !== null) paramsUpdate(this.#params, u);
    }
    get searchParams() {
      if (this.#params === null) this.#params = paramsOf(this.#u);
      return this.#params;
    }
    get hash() { const f = this.#u.fragment; return f === null || f === "" ? "" : "#" + f; }
    set hash(v) {
      const u = this.#u;
      v = toUSV(v);
      if (v === "") { u.fragment = null; return; }
      if (v[0] === "#") v = v.slice(1);
      u.fragment = "";
      parse(v, undefined, u, FRAGMENT);
    }
    // #setWith runs the parser with a state override on a copy, and keeps
    // the copy unless it failed.
    #setWith(v, state) {
      const u = this.#u;
      if (u.opaque && (state === HOST || state === HOSTNAME)) return;
      const c = copyRecord(u);
      if (parse(toUSV(v), undefined, c, state) !== null) this.#u = Object.assign(u, c);
    }
    toString() { return serialize(this.#u, false); }
    toJSON() { return serialize(this.#u, false); }
  }
  Object.defineProperty(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });

  return ObjectFreeze({ __proto__: null, URL, URLSearchParams });
})
