//go:build linux

package forkserver_test

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stepbox/stepbox/internal/forkserver"
	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) {
	forkserver.MaybeServe()
	os.Exit(m.Run())
}

func start(t *testing.T) *forkserver.Server {
	t.Helper()
	s, err := forkserver.Start("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// namespaced asks for new user and pid namespaces, mapping the caller's
// uid and gid to root inside.
func namespaced() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
}

// TestChildOfTheCaller: the process the server starts is the caller's
// child: the caller waits for it and gets its status; it got the
// descriptors, the environment and the namespaces it was given.
func TestChildOfTheCaller(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	s := start(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := s.StartProcess(sh, []string{"sh", "-c", `echo "$GREETING $(id -u) $$" >&3; exit 7`}, &os.ProcAttr{
		Env:   []string{"GREETING=hello", "PATH=/usr/bin:/bin"},
		Files: []*os.File{nil, nil, os.Stderr, w},
		Sys:   namespaced(),
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	state, err := p.Wait()
	if err != nil {
		t.Fatalf("the caller cannot wait for its child: %v", err)
	}
	if state.ExitCode() != 7 {
		t.Errorf("exit status %v, want 7", state)
	}
	out := make([]byte, 100)
	n, _ := r.Read(out)
	// Root of its user namespace, pid 1 of its pid namespace.
	if got := string(out[:n]); got != "hello 0 1\n" {
		t.Errorf("the child wrote %q", got)
	}
}

// TestRefusesWithoutNamespaces: a process that could be vforked is not
// the server's business.
func TestRefusesWithoutNamespaces(t *testing.T) {
	s := start(t)
	_, err := s.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{Sys: &syscall.SysProcAttr{}})
	if err == nil {
		t.Fatal("started a process without namespaces")
	}
}

// TestExecErrors: a failed exec comes back as the errno it failed with.
func TestExecErrors(t *testing.T) {
	s := start(t)
	_, err := s.StartProcess("/nonexistent/binary", []string{"x"}, &os.ProcAttr{Sys: namespaced()})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("exec of a missing binary: %v", err)
	}
}

// TestGone: after Close, or once the server died, StartProcess says so.
func TestGone(t *testing.T) {
	s := start(t)
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if _, err := s.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{Sys: namespaced()}); !errors.Is(err, forkserver.ErrGone) {
		t.Errorf("a dead server: %v", err)
	}
	s = start(t)
	_ = s.Close()
	if _, err := s.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{Sys: namespaced()}); !errors.Is(err, forkserver.ErrGone) {
		t.Errorf("a closed server: %v", err)
	}
}

// TestReapHolders: a child left holding a request's descriptors (a
// process the server forked and died before reporting) is killed and
// reaped; a child holding none is left alone.
func TestReapHolders(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	other, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	start := func(stdin *os.File) *os.Process {
		// cat waits on its input (with an output: GNU cat exits at once
		// without one).
		p, err := os.StartProcess("/bin/cat", []string{"cat"}, &os.ProcAttr{Files: []*os.File{stdin, null, null}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	holder, bystander := start(r), start(other)
	r.Close()
	other.Close()
	defer func() { _ = bystander.Kill(); _, _ = bystander.Wait() }()
	if n := forkserver.ReapHolders([]*os.File{w}, "", 0); n != 1 {
		t.Fatalf("reaped %d processes, want 1", n)
	}
	if err := holder.Signal(syscall.Signal(0)); err == nil {
		t.Error("the holder is still there")
	}
	if err := bystander.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the bystander was touched: %v", err)
	}
}

// TestReapExitedOrphans: a child that already exited (a fork that failed
// when the server died) is reaped when it has the server's command name
// and started since the request; another zombie is left to its owner.
func TestReapExitedOrphans(t *testing.T) {
	since := forkserver.Now() - 1
	orphan, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.StartProcess("/bin/false", []string{"false"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	// Both exit at once; neither is waited for yet, so both are zombies.
	for _, p := range []*os.Process{orphan, other} {
		testenv.WaitFor(t, "a zombie", func() bool { return forkserver.Zombie(p.Pid) })
	}
	if n := forkserver.ReapHolders(nil, "true", since); n != 1 {
		t.Errorf("reaped %d processes, want 1", n)
	}
	if forkserver.Zombie(orphan.Pid) {
		t.Error("the orphan is still a zombie")
	}
	if !forkserver.Zombie(other.Pid) {
		t.Error("the other zombie was reaped")
	}
	if st, err := other.Wait(); err != nil || st.ExitCode() != 1 {
		t.Errorf("the other zombie's owner: %v %v", st, err)
	}
}
