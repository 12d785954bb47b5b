package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux architecture Go supports.
const clockTicks = 100

// Sample is one reading of a process.
type Sample struct {
	PID int
	// CPU is the user plus system time the process has used since it started.
	CPU time.Duration
	// RSS is the resident set size in bytes: RSSAnon, the memory the
	// process allocated, plus RSSFile, pages of files it maps (its binary)
	// — clean, shared with every process mapping the same file, and more or
	// fewer of them resident as the page cache holds the file; plus shmem.
	RSS, RSSAnon, RSSFile uint64
	At                    time.Time
}

// Read samples one process.
func Read(pid int) (Sample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("reading stat of pid %d: %w", pid, err)
	}
	cpu, err := parseCPU(stat)
	if err != nil {
		return Sample{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("reading status of pid %d: %w", pid, err)
	}
	smp := Sample{PID: pid, CPU: cpu, At: time.Now()}
	for field, into := range map[string]*uint64{"VmRSS": &smp.RSS, "RssAnon": &smp.RSSAnon, "RssFile": &smp.RSSFile} {
		if *into, err = statusKB(status, field); err != nil {
			return Sample{}, fmt.Errorf("pid %d: %w", pid, err)
		}
	}
	return smp, nil
}

// parseCPU returns utime+stime from the content of /proc/<pid>/stat. The
// command name (field 2) may contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseCPU(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed stat")
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed stat: %d fields", len(fields))
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// statusKB returns a field given in kB, in bytes, from the content of
// /proc/<pid>/status.
func statusKB(status []byte, field string) (uint64, error) {
	for _, line := range strings.Split(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("malformed %s line %q", field, line)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no %s (a zombie or kernel thread?)", field)
}

// Usage is what a process used between two samples.
type Usage struct {
	// Cores is CPU time per wall time: 1.0 is one core busy all along.
	Cores float64
	// RSS, RSSAnon and RSSFile are the resident memory at the later sample.
	RSS, RSSAnon, RSSFile uint64
}

// Between returns the usage from a to b, two samples of one process.
func Between(a, b Sample) Usage {
	u := Usage{RSS: b.RSS, RSSAnon: b.RSSAnon, RSSFile: b.RSSFile}
	if wall := b.At.Sub(a.At); wall > 0 {
		u.Cores = float64(b.CPU-a.CPU) / float64(wall)
	}
	return u
}
