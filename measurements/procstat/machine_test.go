package procstat

import (
	"math"
	"strings"
	"testing"
)

// procStat is /proc/stat of a 2-core machine, cut to what matters.
const procStat = `cpu  1000 50 400 8000 200 30 20 300 100 0
cpu0 500 25 200 4000 100 15 10 150 50 0
cpu1 500 25 200 4000 100 15 10 150 50 0
intr 123456 0 0
ctxt 987654
btime 1767225600
processes 4242
procs_running 3
`

func TestParseMachine(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       MachineCPU
		wantErr    string
	}{
		// busy = user+nice+system+irq+softirq+steal, guest inside user;
		// total adds idle and iowait.
		{name: "current kernel", stat: procStat, want: MachineCPU{Busy: 1000 + 50 + 400 + 30 + 20 + 300, Total: 1800 + 8000 + 200, Cores: 2}},
		{name: "oldest kernel, four columns", stat: "cpu 10 0 5 85\ncpu0 10 0 5 85\n", want: MachineCPU{Busy: 15, Total: 100, Cores: 1}},
		{name: "three columns", stat: "cpu 10 0 5\n", wantErr: "malformed cpu line"},
		{name: "old kernel, seven columns", stat: "cpu 10 0 5 80 5 0 0\ncpu0 10 0 5 80 5 0 0\n", want: MachineCPU{Busy: 15, Total: 100, Cores: 1}},
		{name: "no cpu line", stat: "intr 1\nctxt 2\n", wantErr: "no cpu line"},
		{name: "not a number", stat: "cpu 10 x 5 80 5\n", wantErr: "column 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMachine(tc.stat)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func TestBusyBetween(t *testing.T) {
	a := MachineCPU{Busy: 1000, Total: 5000, Cores: 2}
	for _, tc := range []struct {
		name   string
		b      MachineCPU
		want   float64
		wantOK bool
	}{
		{"all busy", MachineCPU{Busy: 1200, Total: 5200}, 1, true},
		{"half busy", MachineCPU{Busy: 1100, Total: 5200}, 0.5, true},
		{"idle", MachineCPU{Busy: 1000, Total: 5200}, 0, true},
		{"no time passed", a, 0, false},
		{"counters went back", MachineCPU{Busy: 10, Total: 6000}, 0, false},
	} {
		got, ok := BusyBetween(a, tc.b)
		if ok != tc.wantOK || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

// TestReadMachine reads this machine's /proc/stat: at least one core, and
// the busy ticks within the total.
func TestReadMachine(t *testing.T) {
	m, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	if m.Cores < 1 || m.Busy > m.Total || m.Total == 0 {
		t.Fatalf("%+v", m)
	}
}
