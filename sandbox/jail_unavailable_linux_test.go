package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// envNoUserNS makes the test binary the helper of TestJailUnavailable.
const envNoUserNS = "SANDBOXTEST_NO_USERNS"

func init() {
	if os.Getenv(envNoUserNS) == "1" {
		noUserNSHelper()
		os.Exit(0)
	}
}

// noUserNSHelper runs as root of a user namespace of its own, where it
// switches nested user namespaces off (user.max_user_namespaces = 0 is per
// user namespace), then reports what New, and a Python and a JavaScript run of an
// in-process engine, say.
func noUserNSHelper() {
	out := map[string]any{}
	defer func() { b, _ := json.Marshal(out); fmt.Println(string(b)) }()
	if err := testenv.DisableUserNamespaces(); err != nil {
		out["error"] = err.Error()
		return
	}
	report := func(key string, err error) {
		je := &sandbox.JailUnavailableError{}
		out[key] = map[string]any{
			"err": fmt.Sprint(err), "as": errors.As(err, &je), "unsupported": errors.Is(err, errors.ErrUnsupported),
			"cause": je.Cause, "fix": je.Fix,
		}
	}
	e, err := sandbox.New(sandbox.Config{PoolSize: 1, Warm: -1})
	if err == nil {
		e.Close(context.Background())
	}
	report("new", err)
	e, err = sandbox.New(sandbox.Config{Isolation: sandbox.IsolationInProcess, PoolSize: 1, Warm: -1})
	if err != nil {
		out["error"] = err.Error()
		return
	}
	defer e.Close(context.Background())
	_, err = e.Run(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return 1"}, nil)
	out["python"] = fmt.Sprint(err)
	out["pythonUnavailable"] = errors.Is(err, sandbox.ErrUnavailable) && errors.Is(err, errors.ErrUnsupported)
	v, err := e.Run(context.Background(), sandbox.Request{Code: "return 6 * 7"}, nil)
	out["js"] = fmt.Sprintf("%s %v", v.Value, err)
}

// TestJailUnavailable switches user namespaces off for real in a helper
// process (the machine's sysctls are left alone) and expects New to fail
// with a JailUnavailableError that names the cause and the fix, a Python
// run of an in-process engine to be UNAVAILABLE, and JavaScript in-process
// to run.
func TestJailUnavailable(t *testing.T) {
	b := testenv.OutputWithoutUserNamespaces(t, envNoUserNS+"=1")
	type verdict struct {
		Err         string
		As          bool
		Unsupported bool
		Cause, Fix  string
	}
	var got struct {
		Error             string
		New               verdict
		Python            string
		PythonUnavailable bool
		JS                string
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Error != "" {
		t.Fatalf("%v %s: %s", err, got.Error, b)
	}
	v := got.New
	if !v.As || !v.Unsupported {
		t.Errorf("New: %q: errors.As JailUnavailableError %v, errors.Is ErrUnsupported %v", v.Err, v.As, v.Unsupported)
	}
	if v.Cause != "user namespaces are switched off: user.max_user_namespaces = 0" || !strings.Contains(v.Fix, "sysctl -w user.max_user_namespaces=") {
		t.Errorf("New: cause %q, fix %q", v.Cause, v.Fix)
	}
	if !strings.Contains(v.Err, "the worker jail cannot be set up here (jail: user namespaces: no space left on device)") ||
		!strings.Contains(v.Err, v.Cause) || !strings.Contains(v.Err, v.Fix) {
		t.Errorf("New: message %q", v.Err)
	}
	if !got.PythonUnavailable {
		t.Errorf("Python run: %q, want UNAVAILABLE wrapping errors.ErrUnsupported", got.Python)
	}
	if got.JS != "42 <nil>" {
		t.Errorf("JavaScript in-process: %q, want 42", got.JS)
	}
}
