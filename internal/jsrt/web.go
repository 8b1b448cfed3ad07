package jsrt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// The web parts' host operations (performance.js, events.js, url.js,
// crypto.js, subtle.js):
// host("web", op, ...). Randomness and cryptography are the Go standard
// library's, never guest code. Bytes cross the bridge as binary strings,
// one character (U+0000 to U+00FF) per byte.

// maxRandomBytes is crypto.getRandomValues' quota (the Web Crypto spec's).
const maxRandomBytes = 65536

// idnaProfile is the WHATWG URL standard's domain-to-ASCII: UTS #46
// non-transitional, CheckHyphens and VerifyDnsLength false, CheckBidi and
// CheckJoiners true, UseSTD3ASCIIRules false (the URL parser refuses the
// forbidden code points itself).
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
)

// webCall runs one of the web part's host operations.
func (rn *run) webCall(args []any) (any, error) {
	op, _ := arg[string](args, 1)
	switch op {
	case "now":
		// performance.now(): milliseconds since the run started, monotonic
		// (time.Since reads the monotonic clock), coarsened to 100 µs.
		return float64(time.Since(rn.start)/(100*time.Microsecond)) / 10, nil
	case "random":
		n, _ := argInt(args, 2)
		if n < 0 || n > maxRandomBytes {
			return nil, fmt.Errorf("crypto.getRandomValues: %d bytes asked, the quota is %d", n, maxRandomBytes)
		}
		b := make([]byte, n)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		return binaryString(b), nil
	case "digest":
		alg, _ := arg[string](args, 2)
		data, err := binaryArg(args, 3)
		if err != nil {
			return nil, err
		}
		h, err := newHash(alg)
		if err != nil {
			return nil, err
		}
		h.Write(data)
		return binaryString(h.Sum(nil)), nil
	case "hmac":
		alg, _ := arg[string](args, 2)
		key, err := binaryArg(args, 3)
		if err != nil {
			return nil, err
		}
		data, err := binaryArg(args, 4)
		if err != nil {
			return nil, err
		}
		if _, err := newHash(alg); err != nil {
			return nil, err
		}
		mac := hmac.New(func() hash.Hash { h, _ := newHash(alg); return h }, key)
		mac.Write(data)
		sum := mac.Sum(nil)
		if _, verify := arg[string](args, 5); verify { // the signature to check
			want, err := binaryArg(args, 5)
			if err != nil {
				return nil, err
			}
			return subtle.ConstantTimeCompare(sum, want) == 1, nil
		}
		return binaryString(sum), nil
	case "aesgcm":
		encrypt, _ := arg[bool](args, 2)
		var parts [4][]byte // key, iv, data, additional data
		for i := range parts {
			b, err := binaryArg(args, 3+i)
			if err != nil {
				return nil, err
			}
			parts[i] = b
		}
		tagBytes, _ := argInt(args, 7)
		return aesGCM(encrypt, parts[0], parts[1], parts[2], parts[3], int(tagBytes))
	case "idna":
		domain, _ := arg[string](args, 2)
		if emptyPunycodeLabel(domain) {
			return nil, errors.New("invalid domain: a label is xn-- alone")
		}
		ascii, err := idnaProfile.ToASCII(domain)
		if err != nil {
			return nil, fmt.Errorf("invalid domain: %w", err)
		}
		return ascii, nil
	}
	return nil, fmt.Errorf("unknown web operation %q", op)
}

// emptyPunycodeLabel reports whether a label of domain is "xn--" and no
// more, which UTS #46 refuses (its Punycode is empty) and
// golang.org/x/net/idna turns into an empty label ("a.xn--" into "a.").
func emptyPunycodeLabel(domain string) bool {
	dot := func(r rune) bool { return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61' } // UTS #46's full stops
	for _, label := range strings.FieldsFunc(domain, dot) {
		if strings.EqualFold(label, "xn--") {
			return true
		}
	}
	return false
}

func newHash(alg string) (hash.Hash, error) {
	switch alg {
	case "SHA-1":
		return sha1.New(), nil
	case "SHA-256":
		return sha256.New(), nil
	case "SHA-384":
		return sha512.New384(), nil
	case "SHA-512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("unsupported hash %q", alg)
}

// errDecrypt is AES-GCM's one failure to decrypt (a wrong key, IV, tag or
// additional data), which Web Crypto reports as an OperationError.
var errDecrypt = errors.New("OperationError: the data could not be decrypted")

func aesGCM(encrypt bool, key, iv, data, ad []byte, tagBytes int) (any, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("AES-GCM: %w", err)
	}
	if len(iv) == 0 {
		return nil, errors.New("OperationError: AES-GCM: the iv must not be empty")
	}
	var aead cipher.AEAD
	switch {
	case tagBytes != 16 && len(iv) != 12:
		return nil, errors.New("OperationError: AES-GCM: a tag shorter than 128 bits needs a 96-bit iv")
	case tagBytes != 16:
		aead, err = cipher.NewGCMWithTagSize(block, tagBytes)
	case len(iv) == 12:
		aead, err = cipher.NewGCM(block)
	default:
		aead, err = cipher.NewGCMWithNonceSize(block, len(iv))
	}
	if err != nil {
		return nil, fmt.Errorf("OperationError: AES-GCM: %w", err)
	}
	if encrypt {
		return binaryString(aead.Seal(nil, iv, data, ad)), nil
	}
	out, err := aead.Open(nil, iv, data, ad)
	if err != nil {
		return nil, errDecrypt
	}
	return binaryString(out), nil
}

// binaryString is b as a binary string (a character per byte).
func binaryString(b []byte) string {
	var s strings.Builder
	s.Grow(len(b) * 2)
	for _, c := range b {
		s.WriteRune(rune(c))
	}
	return s.String()
}

// binaryArg reads args[i], a binary string, as its bytes.
func binaryArg(args []any, i int) ([]byte, error) {
	s, _ := arg[string](args, i)
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r > 0xff {
			return nil, errors.New("the bridge got a binary string with a character above U+00FF")
		}
		out = append(out, byte(r))
		s = s[n:]
	}
	return out, nil
}
