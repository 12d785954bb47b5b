package runner

import (
	"context"
	"errors"
	testingclock "k8s.io/utils/clock/testing"
	"strings"
	"testing"
	"time"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/procstat"
)

var satT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// satSamples are samples of a 2-core machine every 5 s from satT0, the
// busy fraction of each interval given in order.
func satSamples(busy ...float64) []hostSample {
	const ticks = 1000 // per interval, both cores
	out := []hostSample{{At: satT0, CPU: procstat.MachineCPU{Busy: 0, Total: 0, Cores: 2}}}
	for i, b := range busy {
		prev := out[len(out)-1].CPU
		out = append(out, hostSample{At: satT0.Add(time.Duration(i+1) * 5 * time.Second), CPU: procstat.MachineCPU{
			Busy: prev.Busy + uint64(b*ticks), Total: prev.Total + ticks, Cores: 2}})
	}
	return out
}

func window(from, to time.Duration) measurements.TimeRange {
	return measurements.TimeRange{Start: satT0.Add(from), End: satT0.Add(to)}
}

func TestBusyOver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []hostSample
		w       measurements.TimeRange
		want    float64
		wantOK  bool
	}{
		{"every interval busy", satSamples(1, 1, 1, 1), window(0, 20*time.Second), 1, true},
		{"mean of the intervals in the window", satSamples(1, 0.9, 1, 0.2), window(0, 15*time.Second), (1 + 0.9 + 1) / 3, true},
		// 2.5 s of the first interval (0.8) and all of the second (1):
		// weighted by time.
		{"intervals weighted by their overlap", satSamples(0.8, 1), window(2500*time.Millisecond, 10*time.Second), (2.5*0.8 + 5*1) / 7.5, true},
		{"a window inside one interval", satSamples(0.2, 0.97, 0.2), window(6*time.Second, 8*time.Second), 0.97, true},
		{"no samples", nil, window(0, time.Minute), 0, false},
		{"one sample", satSamples(), window(0, time.Minute), 0, false},
		{"window after the samples", satSamples(1, 1), window(time.Minute, 2*time.Minute), 0, false},
		{"samples cover under half the window", satSamples(1, 1), window(0, 30*time.Second), 0, false},
		{"samples cover half the window", satSamples(1, 1, 1), window(0, 30*time.Second), 1, true},
		{"an empty window", satSamples(1, 1), window(5*time.Second, 5*time.Second), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cores, ok := busyOver(tc.samples, tc.w)
			if ok != tc.wantOK || (ok && (abs(got-tc.want) > 1e-9 || cores != 2)) {
				t.Fatalf("busyOver = %v, %d cores, %v; want %v, 2 cores, %v", got, cores, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestAnnotateSaturation: a violation over a window the host spent at
// least 95 % busy says so; one at 90 % does not; without samples nothing
// is said; only violations are annotated, and no verdict changes.
func TestAnnotateSaturation(t *testing.T) {
	w := window(0, 20*time.Second)
	violated := func() measurements.Summary {
		return measurements.Summary{Method: "PodStartupLatency", Verdict: measurements.Violated, Window: &w, Violations: []string{"p99 6s > 5s"}}
	}
	for _, tc := range []struct {
		name    string
		summary measurements.Summary
		samples []hostSample
		want    string
	}{
		{"98 % busy annotates", violated(), satSamples(0.98, 0.98, 0.98, 0.98),
			"host saturated: 98% of 2 cores busy over the violating window 12:00:00–12:00:20"},
		{"exactly 95 % annotates", violated(), satSamples(0.95, 0.95, 0.95, 0.95),
			"host saturated: 95% of 2 cores busy over the violating window 12:00:00–12:00:20"},
		{"90 % does not", violated(), satSamples(0.9, 0.9, 0.9, 0.9), ""},
		{"no samples, no note", violated(), nil, ""},
		{"a violation without a window", func() measurements.Summary { s := violated(); s.Window = nil; return s }(), satSamples(1, 1, 1, 1), ""},
		{"a pass on a busy host", func() measurements.Summary { s := violated(); s.Verdict = measurements.Pass; return s }(), satSamples(1, 1, 1, 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict := tc.summary.Verdict
			got := annotateSaturation([]measurements.Summary{tc.summary}, tc.samples)
			if got[0].HostSaturated != tc.want || got[0].Verdict != verdict {
				t.Fatalf("note %q verdict %s, want %q %s", got[0].HostSaturated, got[0].Verdict, tc.want, verdict)
			}
		})
	}
	if n := saturationNote(1, 1, w); !strings.Contains(n, "100% of 1 core busy") {
		t.Errorf("one core: %q", n)
	}
}

// TestHostSampler: samples at start and at stop, with the injected clock
// and reader; a failed read is skipped.
func TestHostSampler(t *testing.T) {
	clock := testingclock.NewFakePassiveClock(satT0)
	reads := 0
	read := func() (procstat.MachineCPU, error) {
		reads++
		clock.SetTime(clock.Now().Add(5 * time.Second))
		if reads == 2 {
			return procstat.MachineCPU{}, errors.New("no /proc/stat")
		}
		return procstat.MachineCPU{Busy: uint64(100 * reads), Total: uint64(100 * reads), Cores: 2}, nil
	}
	h := newHostSampler(read, clock)
	// The ticker never fires within the test: start's and stop's samples
	// and one taken by hand are all there is.
	h.start(context.Background(), time.Hour)
	h.sample() // fails
	h.stop()
	h.stop() // safe twice
	got := h.Samples()
	if len(got) != 2 || !got[0].At.Equal(satT0.Add(5*time.Second)) || !got[1].At.Equal(satT0.Add(15*time.Second)) || got[1].CPU.Busy != 300 {
		t.Fatalf("samples %+v", got)
	}
	var none *hostSampler
	none.stop()
	if none.Samples() != nil {
		t.Fatal("a nil sampler has samples")
	}
}

func TestRunsLocally(t *testing.T) {
	remote := []measurements.Component{{Name: "fleet-1", MetricsURL: "http://10.0.0.2:10269/metrics"}}
	if runsLocally(remote) || runsLocally(nil) {
		t.Error("a cluster without a local process runs locally")
	}
	if !runsLocally(append(remote, measurements.Component{Name: "kube-apiserver", PID: 4242})) {
		t.Error("a cluster with a local apiserver does not run locally")
	}
}
