package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// versionCommand prints the version, then one line per module built with
// cgo: whether this binary has it and, if not, why and what to do.
//
//	stepbox 0.1.0-dev (go1.26.8 linux/amd64)
//	duckdb: yes (DuckDB v1.3.2)
//	glpk: no (GLPK is not available: this binary was built with the stepbox_noglpk tag, ...)
func versionCommand(ctx context.Context, st *State) int {
	fmt.Fprintf(st.Stdout, "stepbox %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	v, err := duckdbVersion(ctx)
	capability(st.Stdout, "duckdb", v, err)
	v, err = glpk.Version(), glpk.Available()
	if err == nil {
		v = "GLPK " + v
	}
	capability(st.Stdout, "glpk", v, err)
	return ExitOK
}

func capability(w io.Writer, name, version string, err error) {
	if err != nil {
		fmt.Fprintf(w, "%s: no (%s)\n", name, message(err))
		return
	}
	fmt.Fprintf(w, "%s: yes (%s)\n", name, version)
}

// message is a module error's message without the "module: " prefix.
func message(err error) string {
	var de *duckdb.Error
	if errors.As(err, &de) {
		if de.Kind == duckdb.KindUnavailable {
			// DuckDB needs only a C++ toolchain to build.
			return de.Message + "; install build-essential and rebuild with cgo (scripts/stepbox does, as root)"
		}
		return de.Message
	}
	var ge *glpk.Error
	if errors.As(err, &ge) {
		return ge.Message
	}
	return err.Error()
}

// duckdbVersion opens a database and asks it for its version.
func duckdbVersion(ctx context.Context) (string, error) {
	db, err := duckdb.Open(ctx, duckdb.Config{})
	if err != nil {
		return "", err
	}
	defer db.Close()
	out, err := db.Query(ctx, "SELECT version() AS v", nil)
	if err != nil {
		return "", err
	}
	var rows []struct{ V string }
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return "", fmt.Errorf("duckdb: version: unexpected result %s", out)
	}
	return "DuckDB " + rows[0].V, nil
}
