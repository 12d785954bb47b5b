package metrics

import (
	"math"
	"testing"
)

func TestAgree(t *testing.T) {
	// The apiserver's latency buckets around a second.
	bounds := []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2}
	for _, c := range []struct {
		name string
		a, b float64
		want bool
	}{
		{"equal", 0.3, 0.3, true},
		{"within 5%", 1.0, 0.96, true},
		{"within the bucket of the larger", 0.45, 0.59, true},
		{"one bucket width apart across a bound", 0.39, 0.58, true},
		{"more than a bucket apart", 0.15, 0.39, false},
		{"over 5% with no bounds", 1.0, 0.9, false},
		{"NaN", math.NaN(), 0.1, false},
		{"beyond the last finite bound", 2.5, 9, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b []float64
			if c.name != "over 5% with no bounds" {
				b = bounds
			}
			if got := Agree(c.a, c.b, 0.05, b); got != c.want {
				t.Errorf("Agree(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestBucketWidth(t *testing.T) {
	bounds := []float64{0.1, 0.5, 1}
	for x, want := range map[float64]float64{0.05: 0.1, 0.1: 0.1, 0.3: 0.4, 1: 0.5, 2: math.Inf(1)} {
		if got := BucketWidth(bounds, x); got != want {
			t.Errorf("BucketWidth(%v) = %v, want %v", x, got, want)
		}
	}
}
