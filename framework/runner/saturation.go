package runner

import (
	"fmt"
	"math"
	"time"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/procstat"
)

const (
	// saturatedBusy is the mean busy fraction of the machine's cores over
	// a violating window from which the host, not Kubernetes, may explain
	// the violation: the control plane and the hollow nodes then queue for
	// CPU, and latencies measure the queue.
	saturatedBusy = 0.95
	// minCoverage is the share of a window the samples must cover for
	// their mean to speak for it: a few seconds say little of five
	// minutes.
	minCoverage = 0.5
)

// busyOver is the machine's mean busy fraction over w, each interval
// between two samples weighted by how much of w it covers, and the core
// count of the last sample. ok is false when the samples cover less than
// minCoverage of w (none, or taken outside it) or w is empty.
func busyOver(samples []hostSample, w measurements.TimeRange) (busy float64, cores int, ok bool) {
	span := w.End.Sub(w.Start)
	if span <= 0 {
		return 0, 0, false
	}
	var covered time.Duration
	var sum float64
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		from, to := maxTime(a.At, w.Start), minTime(b.At, w.End)
		if !to.After(from) {
			continue
		}
		frac, valid := procstat.BusyBetween(a.CPU, b.CPU)
		if !valid {
			continue
		}
		overlap := to.Sub(from)
		sum += frac * float64(overlap)
		covered += overlap
		cores = b.CPU.Cores
	}
	if covered == 0 || float64(covered) < minCoverage*float64(span) {
		return 0, 0, false
	}
	return sum / float64(covered), cores, true
}

// annotateSaturation sets HostSaturated on each violated summary whose
// window the host spent at least saturatedBusy busy, and returns the
// summaries. The verdicts stay as they are: the note is information for
// the reader of a violation.
func annotateSaturation(summaries []measurements.Summary, samples []hostSample) []measurements.Summary {
	for i := range summaries {
		s := &summaries[i]
		if s.Verdict != measurements.Violated || s.Window == nil {
			continue
		}
		busy, cores, ok := busyOver(samples, *s.Window)
		if ok && busy >= saturatedBusy {
			s.HostSaturated = saturationNote(busy, cores, *s.Window)
		}
	}
	return summaries
}

// saturationNote says it as the reports show it: "host saturated: 98% of
// 2 cores busy over the violating window 12:01:05–12:06:05".
func saturationNote(busy float64, cores int, w measurements.TimeRange) string {
	what := fmt.Sprintf("%d cores", cores)
	if cores == 1 {
		what = "1 core"
	}
	// Rounded down: "100%" only when every core was busy all along.
	return fmt.Sprintf("host saturated: %.0f%% of %s busy over the violating window %s–%s",
		math.Floor(100*busy+1e-9), what, w.Start.Format(time.TimeOnly), w.End.Format(time.TimeOnly))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
