package jail

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupTarget is a directory under which per-worker cgroups of one
// controller can be made.
type cgroupTarget struct {
	version int // 1 or 2
	parent  string
}

// cgroupPlan says where the memory and pids controllers are used; a nil
// target means the rlimit fallback.
type cgroupPlan struct {
	memory, pids *cgroupTarget
}

func (p cgroupPlan) enforcement() (memory, procs Enforcement) {
	by := func(t *cgroupTarget) Enforcement {
		switch {
		case t == nil:
			return EnforcedByRlimit
		case t.version == 2:
			return EnforcedByCgroup2
		}
		return EnforcedByCgroup1
	}
	return by(p.memory), by(p.pids)
}

type cgroupMount struct {
	root, dir   string
	controllers []string // v1 super options
}

// detectCgroups finds, for memory and pids, a writable cgroup directory:
// v2 when the controller is available there, else v1, else none. parent
// overrides the host process's own cgroup (see Config.CgroupParent).
func detectCgroups(parent string) cgroupPlan {
	v2, v1 := cgroupMounts()
	own := ownCgroups()
	var plan cgroupPlan
	for _, ctl := range []string{"memory", "pids"} {
		var t *cgroupTarget
		if v2 != nil {
			if dir := cgroupDir(*v2, own["2"], parent); cgroupV2Usable(dir, ctl) {
				t = &cgroupTarget{version: 2, parent: dir}
			}
		}
		if t == nil {
			for _, m := range v1 {
				if !slices.Contains(m.controllers, ctl) {
					continue
				}
				if dir := cgroupDir(m, own[ctl], parent); cgroupUsable(dir, ctl, 1) {
					t = &cgroupTarget{version: 1, parent: dir}
				}
				break
			}
		}
		if ctl == "memory" {
			plan.memory = t
		} else {
			plan.pids = t
		}
	}
	return plan
}

// cgroupMounts parses /proc/self/mountinfo.
func cgroupMounts() (v2 *cgroupMount, v1 []cgroupMount) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		m := cgroupMount{root: unescapeMount(fields[3]), dir: unescapeMount(fields[4])}
		switch fields[sep+1] {
		case "cgroup2":
			if v2 == nil {
				v2 = &m
			}
		case "cgroup":
			m.controllers = strings.Split(fields[sep+3], ",")
			v1 = append(v1, m)
		}
	}
	return v2, v1
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups maps "2" and each v1 controller to this process's cgroup path.
func ownCgroups() map[string]string {
	own := map[string]string{}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return own
	}
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own["2"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own
}

// cgroupDir places a cgroup path (relative to the hierarchy's root, as
// /proc/self/cgroup shows it) under the mount point.
func cgroupDir(m cgroupMount, own, parent string) string {
	rel := own
	if parent != "" {
		rel = parent
	} else if m.root != "/" {
		rel = strings.TrimPrefix(own, m.root)
	}
	return filepath.Join(m.dir, rel)
}

func cgroupV2Usable(dir, ctl string) bool {
	avail, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil || !slices.Contains(strings.Fields(string(avail)), ctl) {
		return false
	}
	enabled, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return false
	}
	if !slices.Contains(strings.Fields(string(enabled)), ctl) {
		// Fails with EBUSY when dir has processes of its own (the "no
		// internal processes" rule) and with EACCES when not delegated.
		if writeCgroupFile(dir, "cgroup.subtree_control", "+"+ctl) != nil {
			return false
		}
	}
	return cgroupUsable(dir, ctl, 2)
}

var cgroupSeq atomic.Int64

// cgroupUsable makes and removes a child cgroup to see that the limit file
// for ctl appears and that we may write it.
func cgroupUsable(dir, ctl string, version int) bool {
	probe := filepath.Join(dir, fmt.Sprintf("stepbox-probe-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return false
	}
	defer os.Remove(probe)
	file := "pids.max"
	if ctl == "memory" {
		file = "memory.max"
		if version == 1 {
			file = "memory.limit_in_bytes"
		}
	}
	return syscall.Access(filepath.Join(probe, file), 2 /* W_OK */) == nil &&
		syscall.Access(filepath.Join(probe, "cgroup.procs"), 2) == nil
}

func writeCgroupFile(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// workerCgroup is one cgroup directory made for one worker.
type workerCgroup struct {
	dir     string
	version int
}

// makeCgroups creates the worker's cgroups and writes its limits. v2 is the
// directory to start the child in (CLONE_INTO_CGROUP), if any; the others
// receive the child's pid in Handle.Started.
func (p cgroupPlan) makeCgroups(cfg Config) (made []*workerCgroup, v2 *workerCgroup, err error) {
	name := fmt.Sprintf("stepbox-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	byParent := map[string]*workerCgroup{}
	get := func(t *cgroupTarget) (*workerCgroup, error) {
		if c := byParent[t.parent]; c != nil {
			return c, nil
		}
		c := &workerCgroup{dir: filepath.Join(t.parent, name), version: t.version}
		if err := mkdirCgroup(c.dir); err != nil {
			return nil, err
		}
		byParent[t.parent] = c
		made = append(made, c)
		if t.version == 2 {
			v2 = c
		}
		return c, nil
	}
	defer func() {
		if err != nil {
			removeCgroups(made)
			made, v2 = nil, nil
		}
	}()
	optional := func(err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // no swap accounting, older kernel
		}
		return err
	}
	if t := p.memory; t != nil {
		c, err := get(t)
		if err != nil {
			return nil, nil, err
		}
		limit := strconv.FormatInt(cfg.MemoryBytes, 10)
		if t.version == 2 {
			err = errors.Join(writeCgroupFile(c.dir, "memory.max", limit),
				optional(writeCgroupFile(c.dir, "memory.swap.max", "0")),
				optional(writeCgroupFile(c.dir, "memory.oom.group", "1")))
		} else {
			// memsw (memory+swap) must not be below the memory limit: write it second.
			err = errors.Join(writeCgroupFile(c.dir, "memory.limit_in_bytes", limit),
				optional(writeCgroupFile(c.dir, "memory.memsw.limit_in_bytes", limit)))
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if t := p.pids; t != nil {
		c, err := get(t)
		if err != nil {
			return nil, nil, err
		}
		if err := writeCgroupFile(c.dir, "pids.max", strconv.Itoa(cfg.MaxProcs)); err != nil {
			return nil, nil, err
		}
	}
	return made, v2, nil
}

// mkdirCgroup creates the cgroup dir. A directory of that name left by an
// earlier process with the same pid (one whose tasks took longer to go
// than removeCgroups waited) is removed first: the kernel removes a cgroup
// only once no task is in it, so a live one is never taken over.
func mkdirCgroup(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) && os.Remove(dir) == nil {
		err = os.Mkdir(dir, 0o755)
	}
	return err
}

// removeCgroups kills whatever is left in the worker's cgroups and removes
// them, waiting up to two seconds for the killed tasks to exit.
func removeCgroups(cgs []*workerCgroup) error {
	var errs []error
	for _, c := range cgs {
		if c.version == 2 {
			_ = writeCgroupFile(c.dir, "cgroup.kill", "1") // Linux >= 5.14
		}
		deadline := time.Now().Add(2 * time.Second)
		for {
			err := os.Remove(c.dir)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("jail: remove cgroup: %w", err))
				break
			}
			// Only tasks of this worker are in its cgroup.
			if data, rerr := os.ReadFile(filepath.Join(c.dir, "cgroup.procs")); rerr == nil {
				for _, f := range strings.Fields(string(data)) {
					if pid, perr := strconv.Atoi(f); perr == nil && pid > 0 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}
