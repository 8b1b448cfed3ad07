//go:build !linux

package jail

import "runtime"

// readFacts: off Linux the operating system is the whole story.
func readFacts() facts { return facts{GOOS: runtime.GOOS} }
