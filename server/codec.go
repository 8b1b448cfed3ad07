package server

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// strictJSON is Connect's JSON codec, except that an unknown field is an
// error (INVALID_ARGUMENT naming it) instead of being dropped: a caller who
// misspells "limits" or "wallMs" must not get a run with the plan's higher
// limits without a word. Binary protobuf (gRPC) keeps protobuf's rule, since
// generated clients cannot misspell a field.
type strictJSON struct{ name string }

func (c strictJSON) Name() string { return c.name }

func (c strictJSON) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", v)
	}
	return protojson.Marshal(m)
}

func (c strictJSON) Unmarshal(b []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", v)
	}
	if len(b) == 0 {
		return errors.New("the body is empty: want a JSON object")
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		return fmt.Errorf("the body is not a valid %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}
