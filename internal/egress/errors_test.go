package egress

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestErrorForms(t *testing.T) {
	e := &Error{Kind: KindTimeout, Reason: "request to x timed out after 5ms (timeoutMs)", err: context.DeadlineExceeded}
	if !errors.Is(e, ErrTimeout) || errors.Is(e, ErrNetwork) || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("errors.Is does not compare kinds")
	}
	if e.Error() != e.Reason {
		t.Errorf("Error() = %q, want the reason", e.Error())
	}
	j, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	// Only kind, limit and reason cross the process boundary.
	if want := `{"kind":"timeout","reason":"request to x timed out after 5ms (timeoutMs)"}`; string(j) != want {
		t.Errorf("JSON = %s, want %s", j, want)
	}
	var back Error
	if err := json.Unmarshal([]byte(`{"kind":"limit","limit":"maxFetchBytes","reason":"r"}`), &back); err != nil ||
		back.Kind != KindLimit || back.Limit != LimitBytes || !errors.Is(&back, ErrLimit) {
		t.Errorf("decoded %+v (%v)", back, err)
	}
}
