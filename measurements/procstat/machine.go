package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineCPU is the whole machine's CPU time since boot, from the first
// line of /proc/stat, in clock ticks: comparing two readings gives how busy
// the machine was in between.
type MachineCPU struct {
	// Busy is every tick not idle: user, nice, system, irq, softirq and
	// steal (time a hypervisor gave another guest, which the machine's
	// processes could not use either). Guest time is inside user already.
	Busy uint64
	// Total is Busy plus idle and iowait.
	Total uint64
	// Cores is the number of CPUs the kernel reports (cpuN lines).
	Cores int
}

// ReadMachine reads /proc/stat.
func ReadMachine() (MachineCPU, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, fmt.Errorf("reading the machine's CPU time: %w", err)
	}
	return ParseMachine(string(data))
}

// ParseMachine reads the aggregate "cpu" line and counts the "cpuN" lines
// of /proc/stat's content. Kernels before 2.6.33 give fewer columns; the
// missing ones count as zero.
func ParseMachine(stat string) (MachineCPU, error) {
	var m MachineCPU
	found := false
	for _, line := range strings.Split(stat, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			m.Cores++
			continue
		}
		if len(fields) < 5 {
			return MachineCPU{}, fmt.Errorf("/proc/stat: malformed cpu line %q", line)
		}
		// user nice system idle iowait irq softirq steal guest guest_nice
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(fields); i++ {
			n, err := strconv.ParseUint(fields[i+1], 10, 64)
			if err != nil {
				return MachineCPU{}, fmt.Errorf("/proc/stat: cpu line column %d: %w", i+1, err)
			}
			v[i] = n
		}
		idle := v[3] + v[4]
		m.Busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		m.Total = m.Busy + idle
		found = true
	}
	if !found {
		return MachineCPU{}, fmt.Errorf("/proc/stat: no cpu line")
	}
	return m, nil
}

// BusyBetween is the fraction of the machine's CPU time that was busy from
// a to b, two readings in that order: 1 is every core busy all along. ok is
// false when no time passed between them or the counters went backwards.
func BusyBetween(a, b MachineCPU) (busy float64, ok bool) {
	if b.Total <= a.Total || b.Busy < a.Busy {
		return 0, false
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total), true
}
