package npm

import (
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Package is one entry of the catalogue: an npm package pinned to a
// version and to the integrity of its tarball.
type Package struct {
	// Name is the package's npm name: "simple-statistics", "@scope/name".
	Name string `json:"name"`
	// Version is an exact version: "7.12.1".
	Version string `json:"version"`
	// Integrity is the SHA-512 of the package's tarball as a subresource
	// integrity string, as "npm view NAME@VERSION dist.integrity" prints
	// it: "sha512-" followed by 88 characters of base64.
	Integrity string `json:"integrity"`
}

// DefaultCatalogue is the catalogue of an engine that configures none.
var DefaultCatalogue = []Package{
	{
		Name:      "simple-statistics",
		Version:   "7.12.1",
		Integrity: "sha512-LYRvHhZceO9MTzDw6ptt3PBoOHuiTqNU5Ew5MLjjcLwuzgfATMf1oMFdgDW7elVDGwZvi98pGoUoFhwuXTHTRA==",
	},
}

// String returns "name@version".
func (p Package) String() string { return p.Name + "@" + p.Version }

var (
	// npm's rules for new package names: lower case, URL-safe, at most
	// 214 characters, an optional scope; not starting with ".", "_" or,
	// here, "-" (which a command line would take for an option).
	nameRE = regexp.MustCompile(`^(?:@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)
	// An exact semantic version.
	versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// Validate reports what is wrong with p, if anything.
func (p Package) Validate() error {
	if errs := p.problems(); len(errs) > 0 {
		return fmt.Errorf("npm: package %s: %w", p, errors.Join(errs...))
	}
	return nil
}

// problems lists what is wrong with p, one error per field.
func (p Package) problems() []error {
	var errs []error
	if len(p.Name) > 214 || !nameRE.MatchString(p.Name) {
		errs = append(errs, fmt.Errorf("name %q is not an npm package name", p.Name))
	}
	if len(p.Version) > 256 || !versionRE.MatchString(p.Version) {
		errs = append(errs, fmt.Errorf("version %q is not an exact version (like 1.2.3)", p.Version))
	}
	if _, err := decodeIntegrity(p.Integrity); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// ValidateCatalogue checks every entry and that no name repeats. It
// reports every problem, joined with errors.Join, each naming its entry by
// index as a JSON path does: `[1]: version "latest" is not an exact
// version (like 1.2.3)`, `[2]: name "x" is also [0]'s`.
func ValidateCatalogue(cat []Package) error {
	var errs []error
	seen := map[string]int{}
	for i, p := range cat {
		for _, e := range p.problems() {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, e))
		}
		if j, dup := seen[p.Name]; dup {
			errs = append(errs, fmt.Errorf("[%d]: name %q is also [%d]'s: a package is in the catalogue once", i, p.Name, j))
			continue
		}
		seen[p.Name] = i
	}
	return errors.Join(errs...)
}

// decodeIntegrity returns the SHA-512 digest of an SRI string.
func decodeIntegrity(sri string) ([]byte, error) {
	b64, ok := strings.CutPrefix(sri, "sha512-")
	if !ok {
		return nil, fmt.Errorf("integrity %q is not a sha512 subresource integrity string (sha512-…)", sri)
	}
	sum, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sum) != sha512.Size {
		return nil, fmt.Errorf("integrity %q is not a sha512 subresource integrity string: bad base64 digest", sri)
	}
	return sum, nil
}

// integrityOf returns the SRI string of data.
func integrityOf(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}
