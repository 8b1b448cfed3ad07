package intl

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// decimal is a non-negative decimal number 0.D × 10^point, D its digits
// (ASCII, no leading or trailing zero); zero has no digits. Formatting
// rounds the decimal digits of a number, not its binary value: the
// shortest digits that read back as the same float64, which is what ICU
// rounds (1.005 to two places is 1.01, as in Node).
type decimal struct {
	digits []byte
	point  int
}

func (d decimal) isZero() bool { return len(d.digits) == 0 }

// magnitude is the exponent of d's first digit: 0 for [1, 10).
func (d decimal) magnitude() int {
	if d.isZero() {
		return 0
	}
	return d.point - 1
}

// shift is d × 10^n.
func (d decimal) shift(n int) decimal {
	if !d.isZero() {
		d.point += n
	}
	return d
}

func trimDecimal(digits []byte, point int) decimal {
	i := 0
	for i < len(digits) && digits[i] == '0' {
		i++
		point--
	}
	digits = digits[i:]
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return decimal{}
	}
	return decimal{digits, point}
}

// decimalOfFloat is |f|, f finite.
func decimalOfFloat(f float64) decimal {
	if f == 0 {
		return decimal{}
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	digits := make([]byte, 0, len(mant))
	for i := 0; i < len(mant); i++ {
		if mant[i] != '.' {
			digits = append(digits, mant[i])
		}
	}
	return trimDecimal(digits, e+1)
}

// parseDecimal reads a decimal literal (a BigInt's digits, or a string
// the step formats): an optional sign, digits with an optional point, an
// optional exponent. ok is false for anything else.
func parseDecimal(s string) (d decimal, neg, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return decimal{}, false, true
	}
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1e6 || e < -1e6 {
			return decimal{}, false, false
		}
		s, exp = s[:i], e
	}
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || !isDigit(ip) || !isDigit(fp) {
		return decimal{}, false, false
	}
	return trimDecimal([]byte(ip+fp), len(ip)+exp), neg, true
}

// roundUp reports whether dropping d's digits from index k on rounds its
// magnitude up in mode (one of ECMA-402's nine, with the value's sign).
func (d decimal) roundUp(k int, mode string, neg bool) bool {
	var first byte = '0'
	if k >= 0 && k < len(d.digits) {
		first = d.digits[k]
	}
	rest := k+1 < len(d.digits) // digits after first (never zeros at the end)
	if k < 0 {
		rest = true // every digit dropped, all below the kept place
	}
	half := first > '5' || first == '5' && rest
	tie := first == '5' && !rest
	switch mode {
	case "ceil":
		return !neg
	case "floor":
		return neg
	case "expand":
		return true
	case "trunc":
		return false
	case "halfCeil":
		return half || tie && !neg
	case "halfFloor":
		return half || tie && neg
	case "halfTrunc":
		return half
	case "halfEven":
		if tie {
			return k > 0 && (d.digits[k-1]-'0')%2 == 1
		}
		return half
	}
	return half || tie // halfExpand
}

// round is d rounded to a multiple of 10^place.
func (d decimal) round(place int, mode string, neg bool) decimal {
	if d.isZero() {
		return d
	}
	k := d.point - place // digits kept
	if k >= len(d.digits) {
		return d
	}
	if k < 0 {
		if mode != "ceil" && mode != "floor" && mode != "expand" {
			return decimal{}
		}
		if d.roundUp(-1, mode, neg) {
			return decimal{[]byte{'1'}, place + 1}
		}
		return decimal{}
	}
	up := d.roundUp(k, mode, neg)
	digits := append([]byte(nil), d.digits[:k]...)
	point := d.point
	if up {
		i := k - 1
		for ; i >= 0 && digits[i] == '9'; i-- {
			digits[i] = '0'
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
			point++
		} else {
			digits[i]++
		}
	}
	return trimDecimal(digits, point)
}

// roundIncrement is d rounded to a multiple of inc × 10^place.
func (d decimal) roundIncrement(inc, place int, mode string, neg bool) decimal {
	if inc == 1 || d.isZero() {
		return d.round(place, mode, neg)
	}
	// d / (inc × 10^place) as a fraction n / m of integers.
	n := new(big.Int)
	n.SetString(string(d.digits), 10)
	m := big.NewInt(int64(inc))
	e := d.point - len(d.digits) - place // d = n × 10^e (units of 10^place)
	ten := big.NewInt(10)
	if e >= 0 {
		n.Mul(n, new(big.Int).Exp(ten, big.NewInt(int64(e)), nil))
	} else {
		m.Mul(m, new(big.Int).Exp(ten, big.NewInt(int64(-e)), nil))
	}
	q, r := new(big.Int).QuoRem(n, m, new(big.Int))
	// Compare 2r with m for the half modes.
	r2 := new(big.Int).Lsh(r, 1)
	cmp := r2.Cmp(m)
	exact := r.Sign() == 0
	var up bool
	switch mode {
	case "ceil":
		up = !neg && !exact
	case "floor":
		up = neg && !exact
	case "expand":
		up = !exact
	case "trunc":
		up = false
	case "halfCeil":
		up = cmp > 0 || cmp == 0 && !neg
	case "halfFloor":
		up = cmp > 0 || cmp == 0 && neg
	case "halfTrunc":
		up = cmp > 0
	case "halfEven":
		up = cmp > 0 || cmp == 0 && q.Bit(0) == 1
	default:
		up = cmp >= 0
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	q.Mul(q, big.NewInt(int64(inc)))
	s := q.String()
	if s == "0" {
		return decimal{}
	}
	return trimDecimal([]byte(s), len(s)+place)
}

// render is d's integer digits, at least minInt of them, and its fraction
// digits, at least minFrac.
func (d decimal) render(minInt, minFrac int) (string, string) {
	var ip, fp string
	switch {
	case d.point <= 0:
		ip = "0"
		if !d.isZero() {
			fp = strings.Repeat("0", -d.point) + string(d.digits)
		}
	case d.point >= len(d.digits):
		ip = string(d.digits) + strings.Repeat("0", d.point-len(d.digits))
	default:
		ip, fp = string(d.digits[:d.point]), string(d.digits[d.point:])
	}
	if len(ip) < minInt {
		ip = strings.Repeat("0", minInt-len(ip)) + ip
	}
	if len(fp) < minFrac {
		fp += strings.Repeat("0", minFrac-len(fp))
	}
	return ip, fp
}

// fractionDigits is how many digits d has after its point.
func (d decimal) fractionDigits() int {
	if n := len(d.digits) - d.point; n > 0 {
		return n
	}
	return 0
}

// String is d in digits, with a point if it has a fraction.
func (d decimal) String() string {
	ip, fp := d.render(1, 0)
	if fp == "" {
		return ip
	}
	return ip + "." + fp
}
