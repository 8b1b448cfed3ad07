package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// descendants returns the pids of every process below root, read from
// /proc (processes in other PID namespaces, like the jailed workers, appear
// there with their host pids).
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := ppid(pid); pp > 0 {
			children[pp] = append(children[pp], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// procRSS is a process's resident set size in bytes (0 when unreadable).
func procRSS(pid int) int64 { return procField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") }

// procPSS is a process's proportional set size in bytes: shared pages
// divided among the processes sharing them.
func procPSS(pid int) int64 { return procField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:") }

func procField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), key); ok {
			fs := strings.Fields(rest)
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// loadavg is /proc/loadavg's three averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// env describes the machine and the tools, for the report.
type env struct {
	date, cpus, cpuModel, memory, kernel, goVersion string
	node, npm, python                               string
	loadBefore                                      string
	commit                                          string // of the Stepbox measured
}

func machine(ctx context.Context, root string, tools bool) env {
	e := env{
		date:       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		cpus:       strconv.Itoa(runtime.NumCPU()),
		cpuModel:   "unknown",
		kernel:     "unknown",
		goVersion:  runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		loadBefore: loadavg(),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.kernel = strings.TrimSpace(string(b))
	}
	if m := procField("/proc/meminfo", "MemTotal:"); m > 0 {
		e.memory = fmt.Sprintf("%.1f GiB", float64(m)/(1<<30))
	}
	if c := version(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD"); c != "not available" {
		e.commit = c
		if st := version(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no"); st != "" {
			e.commit += " with uncommitted changes"
		}
	}
	if tools {
		e.node = version(ctx, "node", "--version")
		e.npm = version(ctx, "npm", "--version")
		e.python = version(ctx, pythonPath(), "--version")
	}
	return e
}

func version(ctx context.Context, cmd string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cmd, args...).CombinedOutput()
	if err != nil {
		return "not available"
	}
	return strings.TrimSpace(string(out))
}

// pythonPath is the interpreter Stepbox uses by default: /usr/bin/python3
// if present, else python3 from PATH. python3 -c runs the same one.
func pythonPath() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p
	}
	return filepath.Join("/usr/bin", "python3")
}

// procName is the first argument pid was started with ("" if unknown).
func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	name, _, _ := strings.Cut(string(b), "\x00")
	return name
}
