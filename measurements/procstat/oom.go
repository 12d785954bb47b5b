package procstat

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OOMKills is how many processes the kernel's OOM killer has killed in
// the memory cgroup process pid runs in, and that cgroup's path: cgroup v2's
// memory.events oom_kill, or cgroup v1's memory.oom_control oom_kill.
// Comparing two readings tells whether the OOM killer struck in between,
// the one fact a killed process's parent cannot learn from its exit.
func OOMKills(pid int) (kills uint64, cgroup string, err error) {
	return oomKills("/proc", "/sys/fs/cgroup", pid)
}

func oomKills(proc, sys string, pid int) (uint64, string, error) {
	f, err := os.Open(filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return 0, "", fmt.Errorf("reading process %d's cgroup: %w", pid, err)
	}
	defer f.Close()
	var v1, v2 string
	found1, found2 := false, false
	s := bufio.NewScanner(f)
	for s.Scan() {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(s.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2, found2 = parts[2], true
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1, found1 = parts[2], true
		}
	}
	if err := s.Err(); err != nil {
		return 0, "", fmt.Errorf("reading process %d's cgroup: %w", pid, err)
	}
	var candidates []string
	if found1 {
		candidates = append(candidates, filepath.Join(sys, "memory", v1, "memory.oom_control"))
	}
	if found2 {
		candidates = append(candidates, filepath.Join(sys, v2, "memory.events"), filepath.Join(sys, "unified", v2, "memory.events"))
	}
	var errs []string
	for _, path := range candidates {
		kills, err := OOMKillsAt(filepath.Dir(path))
		if err == nil {
			return kills, filepath.Dir(path), nil
		}
		errs = append(errs, err.Error())
	}
	return 0, "", fmt.Errorf("process %d's memory cgroup: %s", pid, strings.Join(errs, "; "))
}

// OOMKillsAt is the OOM-kill counter of the memory cgroup at dir, a
// directory OOMKills returned.
func OOMKillsAt(dir string) (uint64, error) {
	var firstErr error
	for _, name := range []string{"memory.events", "memory.oom_control"} {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
				kills, err := strconv.ParseUint(strings.TrimSpace(n), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: %q: %w", path, line, err)
				}
				return kills, nil
			}
		}
		return 0, fmt.Errorf("%s has no oom_kill counter", path)
	}
	return 0, firstErr
}
