package fleet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Delay is a distribution of durations: how long a pod takes to start, or
// how long it runs. The zero value is always 0.
//
// Syntax: a duration ("2s"), or "uniform:MIN-MAX", "normal:MEAN,STDDEV",
// "exp:MEAN" (exponential). Drawn values are never negative.
type Delay struct {
	kind       string
	a, b       time.Duration
	specString string
}

// ParseDelay parses the syntax described at Delay.
func ParseDelay(s string) (Delay, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Delay{}, nil
	}
	kind, args, found := strings.Cut(s, ":")
	if !found {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Delay{}, fmt.Errorf("%q: want a duration like 2s, or uniform:1s-3s, normal:2s,500ms, exp:2s", s)
		}
		return Delay{kind: "fixed", a: d, specString: s}, nil
	}
	bad := fmt.Errorf("%q: want %s", s, map[string]string{
		"uniform": "uniform:MIN-MAX, e.g. uniform:1s-3s",
		"normal":  "normal:MEAN,STDDEV, e.g. normal:2s,500ms",
		"exp":     "exp:MEAN, e.g. exp:2s",
	}[kind])
	two := func(sep string) (time.Duration, time.Duration, bool) {
		x, y, ok := strings.Cut(args, sep)
		if !ok {
			return 0, 0, false
		}
		a, errA := time.ParseDuration(x)
		b, errB := time.ParseDuration(y)
		return a, b, errA == nil && errB == nil && a >= 0 && b >= 0
	}
	switch kind {
	case "uniform":
		a, b, ok := two("-")
		if !ok || b < a {
			return Delay{}, bad
		}
		return Delay{kind: kind, a: a, b: b, specString: s}, nil
	case "normal":
		a, b, ok := two(",")
		if !ok {
			return Delay{}, bad
		}
		return Delay{kind: kind, a: a, b: b, specString: s}, nil
	case "exp":
		a, err := time.ParseDuration(args)
		if err != nil || a < 0 {
			return Delay{}, bad
		}
		return Delay{kind: kind, a: a, specString: s}, nil
	}
	return Delay{}, fmt.Errorf("%q: unknown distribution %q (allowed: a duration, uniform:, normal:, exp:)", s, kind)
}

// Draw returns one value of the distribution.
func (d Delay) Draw() time.Duration {
	var v float64
	switch d.kind {
	case "", "fixed":
		return d.a
	case "uniform":
		v = float64(d.a) + rand.Float64()*float64(d.b-d.a)
	case "normal":
		v = float64(d.a) + rand.NormFloat64()*float64(d.b)
	case "exp":
		v = rand.ExpFloat64() * float64(d.a)
	}
	return time.Duration(math.Max(0, v))
}

// String returns the syntax the Delay was parsed from.
func (d Delay) String() string {
	if d.specString == "" {
		return "0s"
	}
	return d.specString
}

// Set and Type make Delay a pflag.Value.
func (d *Delay) Set(s string) error {
	v, err := ParseDelay(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Type names the flag's value type in help output.
func (d *Delay) Type() string { return "delay" }
