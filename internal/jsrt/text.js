// Stepbox guest bootstrap, a part: the text globals, atob, btoa,
// TextEncoder and TextDecoder (UTF-8 only), and the UTF-8 codec the other
// web parts share. A VM reads it when a step first reads one of these
// globals (bootstrap.js, __sbx_lazy), or when another part first needs
// the codec. A BufferSource's bytes are bytes.js's.
//
// Library code the step uses (doc.go, "The web platform's globals"). The
// one thing of another part it needs, DOMException, it asks for only when
// it throws one, so its first use does not load dom.js.
"use strict";
(function __sbx_textPart(bridge) {
  const { ReflectApply, StringCtor, StringFromCharCode, Uint8ArrayCtor, TypedArrayName, TypeErrorCtor, ObjectFreeze,
    ObjectGetPrototypeOf } = bridge;
  const RangeErrorCtor = RangeError;
  const SymbolToStringTag = Symbol.toStringTag;

  function __sbx_setTag(C, name) {
    Object.defineProperty(C.prototype, SymbolToStringTag, { value: name, configurable: true });
  }
  // A plain Uint8Array is its own bytes; another BufferSource's are
  // bytes.js's to find.
  function __sbx_bufferSource(v, what) {
    if (ReflectApply(TypedArrayName, v, []) === "Uint8Array" && ObjectGetPrototypeOf(v) === Uint8ArrayCtor.prototype) return v;
    return bridge.part("bytes").__sbx_bufferSource(v, what);
  }
  // A DOMException is dom.js's, loaded when the first one is thrown.
  function __sbx_dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }

  // ---- base64 -----------------------------------------------------------------

  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function __sbx_b64value(c) {
    if (c >= 65 && c <= 90) return c - 65;
    if (c >= 97 && c <= 122) return c - 71;
    if (c >= 48 && c <= 57) return c + 4;
    return c === 43 ? 62 : c === 47 ? 63 : -1;
  }
  function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("btoa: 1 argument required, but only 0 present");
    const s = StringCtor(data);
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = i + 1 < s.length ? s.charCodeAt(i + 1) : 0, c = i + 2 < s.length ? s.charCodeAt(i + 2) : 0;
      if (a > 255 || b > 255 || c > 255) throw __sbx_dom("Invalid character", "InvalidCharacterError");
      const n = (a << 16) | (b << 8) | c;
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "=");
    }
    return out;
  }
  // atob is the HTML standard's forgiving-base64 decode.
  function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("atob: 1 argument required, but only 0 present");
    const s = StringCtor(data);
    let clean = "";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 32) clean += s[i];
    }
    if (clean.length % 4 === 0) {
      if (clean.endsWith("==")) clean = clean.slice(0, -2);
      else if (clean.endsWith("=")) clean = clean.slice(0, -1);
    }
    if (clean.length % 4 === 1) throw __sbx_dom("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
    let out = "", buf = 0, bits = 0;
    for (let i = 0; i < clean.length; i++) {
      const v = __sbx_b64value(clean.charCodeAt(i));
      if (v < 0) throw __sbx_dom("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
      buf = ((buf << 6) | v) & 0xffffff; bits += 6;
      if (bits >= 8) { bits -= 8; out += StringFromCharCode((buf >> bits) & 255); }
    }
    return out;
  }

  // ---- TextEncoder, TextDecoder ---------------------------------------------

  // __sbx_utf8 is the UTF-8 encoding of s, lone surrogates as U+FFFD.
  function __sbx_utf8(s) {
    s = StringCtor(s);
    const out = new Uint8ArrayCtor(__sbx_utf8Length(s));
    __sbx_utf8Into(s, out);
    return out;
  }
  function __sbx_utf8Length(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 4; i++; }
      else n += 3;
    }
    return n;
  }
  // __sbx_utf8Into writes what fits of s into out: [UTF-16 units read, bytes written].
  function __sbx_utf8Into(s, out) {
    let k = 0, i = 0;
    const max = out.length;
    for (; i < s.length; i++) {
      let c = s.charCodeAt(i), units = 1;
      if (c >= 0xd800 && c < 0xe000) {
        const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); units = 2; }
        else c = 0xfffd;
      }
      if (c < 0x80) { if (k + 1 > max) break; out[k++] = c; }
      else if (c < 0x800) { if (k + 2 > max) break; out[k++] = 0xc0 | (c >> 6); out[k++] = 0x80 | (c & 63); }
      else if (c < 0x10000) { if (k + 3 > max) break; out[k++] = 0xe0 | (c >> 12); out[k++] = 0x80 | ((c >> 6) & 63); out[k++] = 0x80 | (c & 63); }
      else { if (k + 4 > max) break; out[k++] = 0xf0 | (c >> 18); out[k++] = 0x80 | ((c >> 12) & 63); out[k++] = 0x80 | ((c >> 6) & 63); out[k++] = 0x80 | (c & 63); }
      i += units - 1;
    }
    return [i, k];
  }

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") { return __sbx_utf8(input); }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8ArrayCtor)) throw new TypeErrorCtor("TextEncoder.encodeInto: the destination must be a Uint8Array");
      const r = __sbx_utf8Into(StringCtor(source), destination);
      return { read: r[0], written: r[1] };
    }
  }
  __sbx_setTag(TextEncoder, "TextEncoder");

  const UTF8_LABELS = ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"];

  // Utf8Decoder is the Encoding standard's UTF-8 decoder, its state kept
  // between the chunks of a stream: an invalid sequence gives one U+FFFD
  // per maximal subpart.
  class TextDecoder {
    #fatal; #ignoreBOM; #cp = 0; #needed = 0; #seen = 0; #lower = 0x80; #upper = 0xbf;
    #bomSeen = false; #streaming = false;
    constructor(label = "utf-8", options = undefined) {
      const l = StringCtor(label).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "").toLowerCase();
      if (UTF8_LABELS.indexOf(l) < 0) throw new RangeErrorCtor("TextDecoder: the encoding \"" + StringCtor(label) + "\" is not supported (only utf-8 is)");
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() { return "utf-8"; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input = undefined, options = undefined) {
      const bytes = input === undefined ? new Uint8ArrayCtor(0) : __sbx_bufferSource(input, "TextDecoder.decode: the input");
      if (!this.#streaming) { this.#reset(); this.#bomSeen = false; }
      this.#streaming = !!(options && options.stream);
      let units = [], out = "";
      const emit = (cp) => {
        if (!this.#bomSeen) {
          this.#bomSeen = true;
          if (cp === 0xfeff && !this.#ignoreBOM) return;
        }
        if (cp >= 0x10000) { cp -= 0x10000; units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 1023)); }
        else units.push(cp);
        if (units.length >= 4096) { out += ReflectApply(StringFromCharCode, undefined, units); units = []; }
      };
      const error = () => {
        if (this.#fatal) { this.#reset(); this.#streaming = false; throw new TypeErrorCtor("The encoded data was not valid for encoding utf-8"); }
        emit(0xfffd);
      };
      const n = bytes.length;
      for (let i = 0; i < n; i++) {
        const b = bytes[i];
        if (this.#needed === 0) {
          if (b <= 0x7f) emit(b);
          else if (b >= 0xc2 && b <= 0xdf) { this.#needed = 1; this.#cp = b & 0x1f; }
          else if (b >= 0xe0 && b <= 0xef) {
            if (b === 0xe0) this.#lower = 0xa0;
            if (b === 0xed) this.#upper = 0x9f;
            this.#needed = 2; this.#cp = b & 0xf;
          } else if (b >= 0xf0 && b <= 0xf4) {
            if (b === 0xf0) this.#lower = 0x90;
            if (b === 0xf4) this.#upper = 0x8f;
            this.#needed = 3; this.#cp = b & 0x7;
          } else error();
          continue;
        }
        if (b < this.#lower || b > this.#upper) {
          this.#reset();
          i--; // the byte starts over
          error();
          continue;
        }
        this.#lower = 0x80; this.#upper = 0xbf;
        this.#cp = (this.#cp << 6) | (b & 0x3f);
        if (++this.#seen === this.#needed) {
          const cp = this.#cp;
          this.#reset();
          emit(cp);
        }
      }
      if (!this.#streaming && this.#needed !== 0) { this.#reset(); error(); }
      if (units.length > 0) out += ReflectApply(StringFromCharCode, undefined, units);
      return out;
    }
    #reset() { this.#cp = 0; this.#needed = 0; this.#seen = 0; this.#lower = 0x80; this.#upper = 0xbf; }
  }
  __sbx_setTag(TextDecoder, "TextDecoder");

  function __sbx_utf8decode(bytes) { return new TextDecoder().decode(bytes); }

  return ObjectFreeze({
    __proto__: null,
    atob, btoa, TextEncoder, TextDecoder,
    // for the other parts, not globals
    __sbx_utf8, __sbx_utf8decode,
  });
})
