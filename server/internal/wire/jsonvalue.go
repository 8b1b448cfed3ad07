package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

// The JSON values of the contract travel as google.protobuf.Value, each
// with a *_json twin of exact JSON text (see "Precision" in the .proto).
// These functions convert between the engine's JSON text and the pair.

// ToValue converts JSON text into a Value. exact reports whether the Value
// carries every number of text exactly, by the .proto's rule: reading the
// number as the nearest double and writing that double back in its
// shortest form gives the same number. A number beyond the double's range
// becomes a string holding its text (and is not exact).
func ToValue(text []byte) (v *structpb.Value, exact bool, err error) {
	if err := validJSON(text); err != nil {
		return nil, false, err
	}
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, false, fmt.Errorf("not valid JSON text: %w", err)
	}
	exact = true
	return toValue(x, &exact), exact, nil
}

func toValue(x any, exact *bool) *structpb.Value {
	switch x := x.(type) {
	case nil:
		return structpb.NewNullValue()
	case bool:
		return structpb.NewBoolValue(x)
	case string:
		return structpb.NewStringValue(x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil { // beyond the double's range
			*exact = false
			return structpb.NewStringValue(string(x))
		}
		if !sameNumber(string(x), strconv.FormatFloat(f, 'g', -1, 64)) {
			*exact = false
		}
		return structpb.NewNumberValue(f)
	case []any:
		l := &structpb.ListValue{Values: make([]*structpb.Value, len(x))}
		for i, e := range x {
			l.Values[i] = toValue(e, exact)
		}
		return structpb.NewListValue(l)
	case map[string]any:
		s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(x))}
		for k, e := range x {
			s.Fields[k] = toValue(e, exact)
		}
		return structpb.NewStructValue(s)
	}
	panic(fmt.Sprintf("wire: unexpected JSON type %T", x))
}

// sameNumber reports whether two JSON number literals denote the same
// number (1.50 and 15e-1 do; -0 and 0 do).
func sameNumber(a, b string) bool {
	na, da, ea, oka := decimal(a)
	nb, db, eb, okb := decimal(b)
	return oka && okb && na == nb && da == db && ea == eb
}

// decimal splits a JSON number literal into its sign, its significant
// digits (no leading or trailing zero; "" for zero) and the power of ten
// of the last digit. ok is false for an exponent too large to hold.
func decimal(s string) (neg bool, digits string, exp int, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return false, "", 0, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits = strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	if digits == "" {
		return false, "", 0, true
	}
	return neg, digits, exp, true
}

// FromValue writes a Value as JSON text: an unset Value is null, object
// members are sorted by key, numbers are written as JavaScript writes them
// (NaN and the infinities, which JSON cannot hold, as null, like
// JSON.stringify).
func FromValue(v *structpb.Value) json.RawMessage {
	var b bytes.Buffer
	writeValue(&b, v)
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v *structpb.Value) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_BoolValue:
		b.WriteString(strconv.FormatBool(k.BoolValue))
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			b.WriteString("null")
			return
		}
		n, _ := json.Marshal(k.NumberValue) // finite: cannot fail
		b.Write(n)
	case *structpb.Value_StringValue:
		writeString(b, k.StringValue)
	case *structpb.Value_ListValue:
		b.WriteByte('[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case *structpb.Value_StructValue:
		f := k.StructValue.GetFields()
		keys := make([]string, 0, len(f))
		for key := range f {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, key := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, key)
			b.WriteByte(':')
			writeValue(b, f[key])
		}
		b.WriteByte('}')
	default: // null, or unset
		b.WriteString("null")
	}
}

func writeString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)         // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// answer converts the engine's JSON text into a Value and its twin: the
// twin is the text when the Value does not carry it exactly, else empty.
// Empty text is null. Text that is not JSON (the engine writes none) goes
// as its twin, beside a string Value holding it.
func answer(text json.RawMessage) (*structpb.Value, string) {
	if len(text) == 0 {
		return structpb.NewNullValue(), ""
	}
	v, exact, err := ToValue(text)
	if err != nil {
		return structpb.NewStringValue(string(text)), string(text)
	}
	if exact {
		return v, ""
	}
	return v, string(text)
}

// fromAnswer is the JSON text of a Value and its twin: the twin when set.
func fromAnswer(v *structpb.Value, twin string) json.RawMessage {
	if twin != "" {
		return json.RawMessage(twin)
	}
	return FromValue(v)
}

// request is the JSON text of a request's Value or twin, named valueName
// and twinName in errors: both set is an error, neither is nil.
func request(valueName string, v *structpb.Value, twinName, twin string) (json.RawMessage, error) {
	switch {
	case v != nil && twin != "":
		return nil, fmt.Errorf("%s and %s are both set: send one (%s as a JSON value, or %s as exact JSON text)", valueName, twinName, valueName, twinName)
	case twin != "":
		if err := validJSON([]byte(twin)); err != nil {
			return nil, fmt.Errorf("%s is %w", twinName, err)
		}
		return json.RawMessage(twin), nil
	case v != nil:
		return FromValue(v), nil
	}
	return nil, nil
}

// validJSON says why text is not one JSON value, with the byte offset.
func validJSON(text []byte) error {
	var raw json.RawMessage
	err := json.Unmarshal(text, &raw)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON text: %w (at byte %d)", err, se.Offset)
	}
	return fmt.Errorf("not valid JSON text: %w", err)
}

// DataAnswer is the answer of a DataResponse: Value (JSON text) or, when
// Rejected, the step's await throws an Error with message Error.
type DataAnswer struct {
	Value    json.RawMessage
	Rejected bool
	Error    string
}

// DataAnswerFromProto reads a DataResponse's answer: value, value_json or
// error, null when none is set. Setting value_json with value or error, or
// value_json that is not JSON text, is an error naming the fields.
func DataAnswerFromProto(d *pb.DataResponse) (DataAnswer, error) {
	twin := d.GetValueJson()
	switch a := d.GetAnswer().(type) {
	case *pb.DataResponse_Error:
		if twin != "" {
			return DataAnswer{}, errors.New("dataResponse: valueJson and error are both set: send one")
		}
		return DataAnswer{Rejected: true, Error: a.Error}, nil
	case *pb.DataResponse_Value:
		v, err := request("dataResponse.value", a.Value, "dataResponse.valueJson", twin)
		return DataAnswer{Value: v}, err
	}
	if twin == "" {
		return DataAnswer{Value: json.RawMessage("null")}, nil
	}
	v, err := request("dataResponse.value", nil, "dataResponse.valueJson", twin)
	return DataAnswer{Value: v}, err
}

// DataResponseToProto answers the data request id with JSON text, sent
// exactly as value_json.
func DataResponseToProto(id int64, value json.RawMessage) *pb.DataResponse {
	return &pb.DataResponse{Id: id, ValueJson: string(value)}
}
