package ipc

import (
	"errors"
	"strings"
	"testing"
)

// wantLimit fails t unless err is a *LimitError for limit with max.
func wantLimit(t *testing.T, err error, limit string, max int) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit || le.Max != max {
		t.Fatalf("got %v, want a %s=%d limit error", err, limit, max)
	}
}

func TestBudgetDataRequests(t *testing.T) {
	b := NewBudget(Limits{MaxDataRequests: 2, MaxDataBytes: 1 << 20})
	for i := 0; i < 2; i++ {
		if err := b.DataRequest(10); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	wantLimit(t, b.DataRequest(10), LimitDataRequests, 2)
	if b.Stats.DataRequests != 2 || b.Stats.DataBytes != 20 {
		t.Errorf("a refused request was counted: %+v", b.Stats)
	}

	// Zero requests allowed: the first is refused.
	wantLimit(t, NewBudget(Limits{MaxDataBytes: 100}).DataRequest(0), LimitDataRequests, 0)
}

func TestBudgetDataBytes(t *testing.T) {
	b := NewBudget(Limits{MaxDataRequests: 10, MaxDataBytes: 100})
	if err := b.DataRequest(60); err != nil {
		t.Fatal(err)
	}
	if err := b.DataBytes(40); err != nil { // exactly the limit: allowed
		t.Fatalf("at the limit: %v", err)
	}
	wantLimit(t, b.DataBytes(1), LimitDataBytes, 100)

	// A request's own parameters count: one that carries too many bytes
	// is refused on its bytes.
	b = NewBudget(Limits{MaxDataRequests: 10, MaxDataBytes: 100})
	wantLimit(t, b.DataRequest(101), LimitDataBytes, 100)
}

func TestBudgetStatus(t *testing.T) {
	b := NewBudget(Limits{MaxStatusEvents: 3})
	for i := 0; i < 3; i++ {
		if err := b.Status(); err != nil {
			t.Fatalf("status %d: %v", i+1, err)
		}
	}
	wantLimit(t, b.Status(), LimitStatusEvents, 3)
	if b.Stats.StatusEvents != 3 {
		t.Errorf("StatusEvents = %d, want 3", b.Stats.StatusEvents)
	}
}

func TestBudgetFetch(t *testing.T) {
	b := NewBudget(Limits{MaxFetchRequests: 1, MaxFetchBytes: 10})
	if err := b.Fetch(); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, b.Fetch(), LimitFetchRequests, 1)
	if err := b.FetchBytes(10); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	wantLimit(t, b.FetchBytes(1), LimitFetchBytes, 10)
	if b.Stats.FetchRequests != 1 || b.Stats.FetchBytes != 11 {
		t.Errorf("stats %+v", b.Stats)
	}
}

func TestBudgetConsole(t *testing.T) {
	t.Run("events", func(t *testing.T) {
		b := NewBudget(Limits{MaxConsoleEvents: 2, MaxConsoleBytes: 1000})
		for i := 0; i < 2; i++ {
			if out, ok, notice := b.Console("line"); !ok || notice || out != "line" {
				t.Fatalf("line %d: %q %v %v", i+1, out, ok, notice)
			}
		}
		// The first line dropped carries the notice, later ones do not.
		if _, ok, notice := b.Console("more"); ok || !notice {
			t.Fatalf("third line: ok=%v notice=%v, want dropped with the notice", ok, notice)
		}
		if _, ok, notice := b.Console("more"); ok || notice {
			t.Fatalf("fourth line: ok=%v notice=%v, want dropped silently", ok, notice)
		}
		if b.Stats.ConsoleEvents != 2 || b.Stats.ConsoleDropped != 2 {
			t.Errorf("stats %+v", b.Stats)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		b := NewBudget(Limits{MaxConsoleEvents: 10, MaxConsoleBytes: 10})
		if out, ok, _ := b.Console("123456"); !ok || out != "123456" {
			t.Fatalf("%q %v", out, ok)
		}
		// 4 bytes left: the line is cut to them.
		if out, ok, _ := b.Console("abcdefgh"); !ok || out != "abcd" {
			t.Fatalf("cut line %q %v, want \"abcd\"", out, ok)
		}
		if _, ok, notice := b.Console("x"); ok || !notice {
			t.Fatalf("no bytes left: ok=%v notice=%v", ok, notice)
		}
	})
	t.Run("a cut never splits a character", func(t *testing.T) {
		b := NewBudget(Limits{MaxConsoleEvents: 10, MaxConsoleBytes: 5})
		// "é" is 2 bytes, "€" 3: 5 bytes hold "éé" (4) but not a third.
		out, ok, _ := b.Console("ééé")
		if !ok || out != "éé" {
			t.Fatalf("%q %v, want \"éé\"", out, ok)
		}
		b = NewBudget(Limits{MaxConsoleEvents: 10, MaxConsoleBytes: 2})
		if out, ok, _ := b.Console("€"); !ok || out != "" {
			t.Fatalf("%q %v, want an empty line (the character does not fit)", out, ok)
		}
	})
}

func TestLimitErrorText(t *testing.T) {
	if got := (&LimitError{LimitFetchBytes, 7}).Error(); got != "limit exceeded: maxFetchBytes=7" {
		t.Errorf("%q", got)
	}
}

func TestCutUTF8(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 0, ""},
		{"a€b", 1, "a"},
		{"a€b", 2, "a"},
		{"a€b", 3, "a"},
		{"a€b", 4, "a€"},
		{strings.Repeat("€", 3), 8, "€€"},
	} {
		if got := cutUTF8(tc.s, tc.n); got != tc.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
