//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
)

// BenchmarkWebFirstUse measures a trivial run beside trivial runs that
// first use one of the web parts (web.js by btoa, url.js by URL, crypto.js
// by randomUUID), from warm VMs: the difference is what a part's first use
// costs; a run that uses none pays nothing for them.
func BenchmarkWebFirstUse(b *testing.B) {
	for _, c := range []struct{ name, code string }{
		{"trivial", `return 1`},
		{"btoa", `return btoa("user:pass")`},
		{"URL", `return new URL("https://example.com/a?b=c").host`},
		{"crypto", `return crypto.randomUUID().length`},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(rt.Close)
			h := &recorder{}
			defer cpuPerOp(b)()
			for b.Loop() {
				h.replies = make(chan ipc.Reply, 1)
				ev := rt.Run(context.Background(), Job{Code: c.code, Input: json.RawMessage(`null`), Limits: testLimits, Host: h, Replies: h.replies})
				if ev.Result == nil {
					b.Fatalf("%+v", ev.Error)
				}
			}
		})
	}
}
