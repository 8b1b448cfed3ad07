package testenv

import (
	"os"
	"runtime"
)

// RequireJail reports whether tests must find the jail, Python and the
// kernel features they use working, and so fail instead of skipping where
// they are missing: on Linux as root, which is how CI runs the suite.
// STEPBOX_REQUIRE_JAIL=1 requires them for any user, =0 never (for a
// developer's machine that lacks them).
func RequireJail() bool {
	switch os.Getenv("STEPBOX_REQUIRE_JAIL") {
	case "1":
		return true
	case "0":
		return false
	}
	return runtime.GOOS == "linux" && os.Geteuid() == 0
}
