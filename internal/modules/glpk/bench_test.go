//go:build cgo && !stepbox_noglpk

package glpk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// smallMIP is a 10-item knapsack with a second (volume) constraint: 10
// binaries, 2 constraints.
func smallMIP() json.RawMessage {
	var obj, w, v, names []string
	for i := range 10 {
		n := fmt.Sprintf("x%d", i)
		obj = append(obj, fmt.Sprintf(`{"name":%q,"coef":%d}`, n, 10+(i*7)%13))
		w = append(w, fmt.Sprintf(`{"name":%q,"coef":%d}`, n, 3+(i*5)%7))
		v = append(v, fmt.Sprintf(`{"name":%q,"coef":%d}`, n, 2+(i*3)%5))
		names = append(names, fmt.Sprintf("%q", n))
	}
	return json.RawMessage(fmt.Sprintf(`{"name":"mip","objective":{"direction":2,"name":"value","vars":[%s]},
		"subjectTo":[{"name":"weight","vars":[%s],"bnds":{"type":3,"ub":25}},{"name":"volume","vars":[%s],"bnds":{"type":3,"ub":18}}],
		"binaries":[%s]}`, strings.Join(obj, ","), strings.Join(w, ","), strings.Join(v, ","), strings.Join(names, ",")))
}

func BenchmarkSolveSmallMIP(b *testing.B) {
	model := smallMIP()
	ctx := context.Background()
	for b.Loop() {
		if _, err := glpk.Solve(ctx, model, glpk.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolveLP10k: an LP with 10,000 variables and 10,001 constraints.
func BenchmarkSolveLP10k(b *testing.B) {
	model := json.RawMessage(bigModel(10_000))
	ctx := context.Background()
	for b.Loop() {
		if _, err := glpk.Solve(ctx, model, glpk.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
