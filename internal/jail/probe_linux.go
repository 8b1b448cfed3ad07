package jail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// probeTimeout bounds the probe child.
const probeTimeout = 10 * time.Second

var probeOnce = sync.OnceValue(probe)

// Probe reports which layers the kernel grants to this process. It runs
// once per process (later calls return the first answer) and takes a few
// tens of milliseconds: it clones a child into each namespace, and then
// runs a complete jail end to end in a probe child, which re-executes this
// binary, so the binary's main must call ChildConfigFromEnv and Enter
// first thing, as every worker binary does.
//
// Use it at engine start to refuse to run (fail closed) and to log what is
// in force; Prepare calls it too.
func Probe() Capabilities { return probeOnce() }

func probe() Capabilities {
	c := Capabilities{OS: runtime.GOOS}
	refuse := func(e *LayerError) { c.Refused = append(c.Refused, e) }

	if err := seccompAvailable(); err != nil {
		var le *LayerError
		errors.As(err, &le)
		refuse(le)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil {
		refuse(refused(LayerNoNewPrivs, os.NewSyscallError("prctl(PR_GET_NO_NEW_PRIVS)", err)))
	}
	c.Memory, c.Procs = detectCgroupsOnce("").enforcement()

	cfg := Config{}.withDefaults()
	var all uintptr
	for _, ns := range namespaceFlags {
		if ns.flag != unix.CLONE_NEWCGROUP {
			all |= ns.flag
		}
	}
	switch {
	case tryClone(cfg, all|unix.CLONE_NEWCGROUP) == nil:
		c.CgroupNS = true
		c.UserNS, c.PIDNS, c.NetNS, c.MountNS, c.IPCNS, c.UTSNS = true, true, true, true, true, true
	case tryClone(cfg, all) == nil:
		c.UserNS, c.PIDNS, c.NetNS, c.MountNS, c.IPCNS, c.UTSNS = true, true, true, true, true, true
	default:
		// Find out which one the kernel refuses.
		if err := tryClone(cfg, 0); err != nil {
			refuse(refused(LayerUserNS, err))
			break
		}
		c.UserNS = true
		for _, ns := range namespaceFlags {
			err := tryClone(cfg, ns.flag)
			granted := err == nil
			switch ns.flag {
			case unix.CLONE_NEWPID:
				c.PIDNS = granted
			case unix.CLONE_NEWNET:
				c.NetNS = granted
			case unix.CLONE_NEWNS:
				c.MountNS = granted
			case unix.CLONE_NEWIPC:
				c.IPCNS = granted
			case unix.CLONE_NEWUTS:
				c.UTSNS = granted
			case unix.CLONE_NEWCGROUP:
				c.CgroupNS = granted
				continue // optional
			}
			if err != nil {
				refuse(refused(ns.layer, err))
			}
		}
	}
	if len(c.Refused) > 0 {
		return c
	}

	// The probe asks what the kernel grants, whatever the binary: give a
	// dynamically linked one its libraries.
	if interp, err := elfInterpreter("/proc/self/exe"); err == nil && interp != "" {
		cfg.ReadOnlyBinds = SystemLibraryBinds()
	}
	r := probeChild(cfg, c.CgroupNS)
	if r.OK {
		c.Mounts, c.PivotRoot, c.Caps, c.NoNewPrivs, c.Seccomp = true, true, true, true, true
		return c
	}
	refuse(&LayerError{Layer: r.Layer, Err: errors.New(r.Error), Unsupported: r.Unsupported})
	// The layers before the failing one worked.
	for _, l := range []struct {
		layer Layer
		ok    *bool
	}{{LayerMount, &c.Mounts}, {LayerPivotRoot, &c.PivotRoot}, {LayerCaps, &c.Caps},
		{LayerNoNewPrivs, &c.NoNewPrivs}, {LayerSeccomp, &c.Seccomp}} {
		if l.layer == r.Layer {
			break
		}
		*l.ok = true
	}
	return c
}

// tryClone clones a child into a new user namespace (plus flags) the way
// Prepare does and has it exec a path that does not exist: ENOENT from the
// exec means the kernel granted the clone and the id mappings.
func tryClone(cfg Config, flags uintptr) error {
	uid, gid, privileged := hostIDs(cfg)
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER | flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: cfg.UID, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: cfg.GID, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: privileged,
		Credential:                 &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), NoSetGroups: !privileged},
		AmbientCaps:                setupCaps,
	}}
	pid, err := syscall.ForkExec("/nonexistent/stepbox-jail-probe", []string{"stepbox-jail-probe"}, attr)
	if err == nil {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
		return nil
	}
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	return err
}

// probeChild runs a whole jail in a re-executed child.
func probeChild(cfg Config, cgroupNS bool) probeResult {
	fail := func(format string, args ...any) probeResult {
		return probeResult{Layer: LayerProbe, Error: fmt.Sprintf(format, args...)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{os.Args[0]}
	cmd.Env = []string{}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	h, err := prepare(cmd, cfg, cgroupPlan{}, cgroupNS, true)
	if err != nil {
		return fail("%v", err)
	}
	defer h.Cleanup()
	if err := cmd.Start(); err != nil {
		return fail("start: %v", err)
	}
	if err := h.Started(cmd.Process.Pid); err != nil {
		cmd.Wait()
		return fail("%v", err)
	}
	werr := cmd.Wait()
	line, _, _ := bytes.Cut(stdout.Bytes(), []byte("\n"))
	var r probeResult
	if err := json.Unmarshal(line, &r); err != nil || (!r.OK && r.Error == "") {
		if ctx.Err() != nil {
			return fail("the probe child did not answer within %v: does the binary's main call jail.ChildConfigFromEnv and jail.Enter?", probeTimeout)
		}
		return fail("the probe child failed (%v): %s", werr, strings.TrimSpace(stderr.String()))
	}
	if r.OK && werr != nil {
		return fail("the probe child reported success but exited with %v", werr)
	}
	return r
}
