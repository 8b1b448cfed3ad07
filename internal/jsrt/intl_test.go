package jsrt

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestIntlDoneWhen: the two examples.
func TestIntlDoneWhen(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, `return [new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" }), (1234567.891).toLocaleString()]`, testLimits, nil)
	if ev.Error != nil || string(ev.Result.Value) != `["7/1/2026, 2:00:00 PM","1,234,567.891"]` {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
}

// TestIntlAgainstNode runs testdata/intl/cases.js in a step and compares
// every value with node's (golden.json, written by gen.sh). The "exact"
// cases must agree; the "locale" ones (other locales than English, which
// this Intl resolves to en-US) are counted. One difference is allowed for:
// node's ICU writes U+202F before AM/PM in formatToParts and "at" dates,
// this Intl an ordinary space.
func TestIntlAgainstNode(t *testing.T) {
	src, err := os.ReadFile("testdata/intl/cases.js")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/intl/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Node  string      `json:"node"`
		Cases [][3]string `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	lim := testLimits
	lim.MaxResultBytes = 8 << 20
	ev := runStep(t, newRT(t), string(src)+"\nreturn evaluate()", lim, nil)
	if ev.Error != nil {
		t.Fatalf("run: %+v", ev.Error)
	}
	var got [][3]string
	if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(golden.Cases) {
		t.Fatalf("%d cases, golden.json has %d: run gen.sh", len(got), len(golden.Cases))
	}
	norm := strings.NewReplacer("\\u202f", " ", "\u202f", " ")
	exact, locale, agree := 0, 0, 0
	for i, want := range golden.Cases {
		if got[i][1] != want[1] {
			t.Fatalf("case %d is %s, golden.json has %s: run gen.sh", i, got[i][1], want[1])
		}
		same := norm.Replace(got[i][2]) == norm.Replace(want[2])
		switch want[0] {
		case "exact":
			exact++
			if !same {
				t.Errorf("%s\n  got  %s\n  node %s", want[1], got[i][2], want[2])
			}
		default:
			locale++
			if same {
				agree++
			} else {
				t.Logf("other locale: %s\n  got  %s\n  node %s", want[1], got[i][2], want[2])
			}
		}
	}
	t.Logf("node %s: %d exact cases; other locales agree in %d of %d", golden.Node, exact, agree, locale)
}
