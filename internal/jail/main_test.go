package jail_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// A jailed child or a helper process never returns from here.
	childHook()
	os.Exit(m.Run())
}
