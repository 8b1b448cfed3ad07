package npm

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotInstalled is wrapped by Load's error when the cache has no usable
// install of the package: none, one of another version or integrity, or
// one that was changed after it was installed.
var ErrNotInstalled = errors.New("npm: package not installed")

// IntegrityError reports a tarball whose SHA-512 is not the catalogue's.
// Nothing is installed.
type IntegrityError struct {
	Package Package
	Got     string // the tarball's integrity
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("npm: %s: the tarball's integrity is %s, the catalogue says %s; not installed", e.Package, e.Got, e.Package.Integrity)
}

// BundleError reports that esbuild could not bundle a package, typically
// because it needs Node's built-in modules.
type BundleError struct {
	Package  Package
	Messages []string // esbuild's errors
	// NodeBuiltins are the Node built-in modules ("fs", "child_process")
	// that the package imports or requires unconditionally, sorted; a step
	// has none of them. A require() inside try/catch, which the package
	// expects may fail, is not one.
	NodeBuiltins []string
}

func (e *BundleError) Error() string {
	if len(e.NodeBuiltins) > 0 {
		return fmt.Sprintf("npm: %s: needs Node built-in modules that a step does not have: %s; not installed",
			e.Package, strings.Join(e.NodeBuiltins, ", "))
	}
	msg := fmt.Sprintf("npm: %s: cannot be bundled for a step", e.Package)
	for i, m := range e.Messages {
		if i == 5 {
			msg += fmt.Sprintf("; and %d more", len(e.Messages)-i)
			break
		}
		msg += "; " + m
	}
	return msg
}
