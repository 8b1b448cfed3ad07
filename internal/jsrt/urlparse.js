// Stepbox guest bootstrap, a part: the WHATWG URL standard's basic URL
// parser in full (special schemes, IPv4 and IPv6 hosts, the
// percent-encode sets, dot segments, state overrides), for the URLs
// url.js's own parser leaves to it and for URL's setters. Domain names
// that are not plain ASCII go to the host's IDNA (golang.org/x/net/idna,
// UTS #46 as the standard asks). Library code the step uses (doc.go, "The
// web platform's globals").
"use strict";
(function __sbx_urlparsePart(bridge) {
  const { host, ObjectFreeze, StringCtor } = bridge;
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

  // encode percent-encodes the code points of s in set.
  function encode(s, set) {
    let out = "";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (set(c)) out += "%" + HEXU[c >> 4] + HEXU[c & 15];
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
  function percentDecode(s) {
    const b = utf8(s);
    const out = new Uint8Array(b.length);
    let k = 0;
    for (let i = 0; i < b.length; i++) {
      const c = b[i];
      if (c === 0x25 && i + 2 < b.length + 0 && hexValue(b[i + 1]) >= 0 && hexValue(b[i + 2]) >= 0) {
        out[k++] = hexValue(b[i + 1]) * 16 + hexValue(b[i + 2]);
        i += 2;
      } else out[k++] = c;
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
      return encode(input, SET_C0);
    }
    const domain = NOT_PLAIN.test(input) ? utf8decode(percentDecode(input)) : input;
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
              const enc = encode(bcps[i], SET_USERINFO);
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
          } else buffer += encode(c, SET_PATH);
          break;
        case OPAQUE_PATH:
          if (c === "?") { url.query = ""; state = QUERY; }
          else if (c === "#") { url.fragment = ""; state = FRAGMENT; }
          else if (c !== undefined) url.path += encode(c, SET_C0);
          break;
        case QUERY:
          if ((!override && c === "#") || c === undefined) {
            url.query += encode(buffer, special(url) ? SET_SPECIAL_QUERY : SET_QUERY);
            buffer = "";
            if (c === "#") { url.fragment = ""; state = FRAGMENT; }
          } else buffer += c;
          break;
        case FRAGMENT:
          if (c !== undefined) url.fragment += encode(c, SET_FRAGMENT);
          break;
      }
      if (p >= cps.length) break;
    }
    return url;
  }

  // toUSV replaces lone surrogates by U+FFFD (what USVString arguments get).
  function toUSV(s) {
    s = StringCtor(s);
    return /[\ud800-\udfff]/.test(s) ? s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd") : s;
  }

  // SETTERS are URL's setters, each on a URL's record u, which it changes.
  const SETTERS = {
    __proto__: null,
    protocol(u, v) { parse(toUSV(v) + ":", undefined, u, SCHEME_START); },
    username(u, v) {
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      u.username = encode(toUSV(v), SET_USERINFO);
    },
    password(u, v) {
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      u.password = encode(toUSV(v), SET_USERINFO);
    },
    host(u, v) { setWith(u, v, HOST); },
    hostname(u, v) { setWith(u, v, HOSTNAME); },
    port(u, v) {
      if (u.host === null || u.host === "" || u.scheme === "file") return;
      v = toUSV(v);
      if (v === "") { u.port = null; return; }
      setWith(u, v, PORT);
    },
    pathname(u, v) {
      if (u.opaque) return;
      const c = copyRecord(u);
      c.path = [];
      if (parse(toUSV(v), undefined, c, PATH_START) !== null) u.path = c.path;
    },
    search(u, v) {
      v = toUSV(v);
      if (v === "") { u.query = null; return; }
      if (v[0] === "?") v = v.slice(1);
      u.query = "";
      parse(v, undefined, u, QUERY);
    },
    hash(u, v) {
      v = toUSV(v);
      if (v === "") { u.fragment = null; return; }
      if (v[0] === "#") v = v.slice(1);
      u.fragment = "";
      parse(v, undefined, u, FRAGMENT);
    },
  };
  // setWith runs the parser with a state override on a copy of u, and
  // keeps the copy's changes unless it failed.
  function setWith(u, v, state) {
    if (u.opaque && (state === HOST || state === HOSTNAME)) return;
    const c = copyRecord(u);
    if (parse(toUSV(v), undefined, c, state) !== null) Object.assign(u, c);
  }

  return ObjectFreeze({
    __proto__: null, parse, toUSV,
    set: function __sbx_urlSet(u, name, v) { SETTERS[name](u, v); },
  });
})
