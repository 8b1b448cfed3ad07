package cli_test

import (
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// TestRunLocales: --locales chooses the locales Intl offers the step; an
// unknown one is a usage error that lists the binary's.
func TestRunLocales(t *testing.T) {
	const step = `return ["fr", "de-CH"].map(l => new Intl.DateTimeFormat(l).resolvedOptions().locale)`
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `["fr","de-CH"]`},
		{[]string{"--locales", "de"}, `["en-US","de-CH"]`},
		{[]string{"--locales", "fr", "--locales", "de-CH"}, `["fr","de-CH"]`},
		{[]string{"--locales", "none"}, `["en-US","en-US"]`},
	} {
		code, out, errs := stepbox(t, step, append([]string{"run", "-"}, c.args...)...)
		if code != cli.ExitOK || strings.TrimSpace(out) != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
	code, _, errs := stepbox(t, step, "run", "-", "--locales", "de,xx")
	if code != cli.ExitUsage || !strings.Contains(errs, "no locale data for xx; there is for en, en-GB") {
		t.Errorf("--locales de,xx: exit %d, stderr %q", code, errs)
	}
}
