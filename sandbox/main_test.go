package sandbox_test

import (
	"context"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m, func() {
		if shared != nil {
			shared.Close(context.Background())
		}
		closeModuleEngine()
	})
}
