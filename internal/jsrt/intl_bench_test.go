//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
)

// BenchmarkIntl measures a run from a warm VM: a trivial step; the same
// step with a first use of Intl (loading the part: intl.js and the host
// functions over internal/intl); and a loop formatting 10,000 dates in a
// zone.
func BenchmarkIntl(b *testing.B) {
	rt, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	for _, bc := range []struct{ name, code string }{
		{"trivial", "return 1 + 1"},
		{"first-use", `return new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" })`},
		{"first-use-plural", `return new Intl.PluralRules("en").select(1)`},
		{"format-10k-dates", `const f = new Intl.DateTimeFormat("en-US", {timeZone: "America/New_York", dateStyle: "medium", timeStyle: "short"});
let s = 0;
for (let i = 0; i < 10000; i++) s += f.format(new Date(1700000000000 + i * 3600000)).length;
return s`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := &recorder{}
			defer cpuPerOp(b)()
			for b.Loop() {
				h.replies = make(chan ipc.Reply, 1)
				ev := rt.Run(context.Background(), Job{Code: bc.code, Input: json.RawMessage(`null`), Limits: testLimits, Host: h, Replies: h.replies})
				if ev.Result == nil {
					b.Fatalf("%+v", ev.Error)
				}
			}
		})
	}
}
