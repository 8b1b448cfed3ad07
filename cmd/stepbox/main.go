// Command stepbox runs untrusted code steps in a sandbox. See the README.
package main

import (
	"context"
	"os"

	"github.com/stepbox/stepbox/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), cli.OSState()))
}
