package jail

import (
	"slices"
	"strings"
	"testing"
)

// The program the host ships in ChildConfig.Program is exactly the one the
// child would have assembled itself, and the cache never mixes policies.
func TestAssembledProgram(t *testing.T) {
	extra := []Rule{{Names: []string{"execve"}, Action: ActionAllow}}
	for _, rules := range [][]Rule{nil, extra} {
		want, err := NewFilter(rules...).Assemble()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // computed, then cached
			got, err := assembled(rules)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("assembled(%v) differs from Assemble (%v)", rules, err)
			}
			back, err := unpackProgram(packProgram(got))
			if err != nil || !slices.Equal(back, want) {
				t.Fatalf("pack/unpack changed the program (%v)", err)
			}
		}
	}
	base, _ := assembled(nil)
	withExec, _ := assembled(extra)
	if slices.Equal(base, withExec) {
		t.Fatal("two policies share one cached program")
	}
	bad := []Rule{{Names: []string{"ptrace"}, Action: ActionAllow}}
	for range 2 {
		if _, err := assembled(bad); err == nil || !strings.Contains(err.Error(), "conflicts with the fixed policy") {
			t.Fatalf("a conflicting rule: %v", err)
		}
	}
	for _, s := range []string{"", "!!", "AAAA", strings.Repeat("A", 8*4097*4/3+4)} {
		if _, err := unpackProgram(s); err == nil {
			t.Errorf("unpackProgram(%.10q...) accepted", s)
		}
	}
}
