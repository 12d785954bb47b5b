package fleet

import (
	"testing"
	"time"
)

func TestParseDelay(t *testing.T) {
	tests := []struct {
		in       string
		wantErr  bool
		min, max time.Duration // bounds every draw must respect
	}{
		{in: "", min: 0, max: 0},
		{in: "2s", min: 2 * time.Second, max: 2 * time.Second},
		{in: "uniform:1s-3s", min: time.Second, max: 3 * time.Second},
		{in: "normal:2s,0s", min: 2 * time.Second, max: 2 * time.Second},
		{in: "normal:10ms,1s", min: 0, max: time.Hour}, // clipped at 0, never negative
		{in: "exp:1s", min: 0, max: time.Hour},
		{in: "-1s", wantErr: true},
		{in: "soon", wantErr: true},
		{in: "uniform:3s-1s", wantErr: true},
		{in: "uniform:1s", wantErr: true},
		{in: "normal:2s", wantErr: true},
		{in: "exp:x", wantErr: true},
		{in: "gamma:1s", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := ParseDelay(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			for range 1000 {
				v := d.Draw()
				if v < tt.min || v > tt.max {
					t.Fatalf("draw %v outside [%v, %v]", v, tt.min, tt.max)
				}
			}
		})
	}
}

func TestDelayMeans(t *testing.T) {
	// The sample mean of 20 000 draws lies within 5 % of the distribution's.
	for spec, mean := range map[string]time.Duration{
		"uniform:1s-3s":   2 * time.Second,
		"normal:2s,200ms": 2 * time.Second,
		"exp:2s":          2 * time.Second,
	} {
		d, err := ParseDelay(spec)
		if err != nil {
			t.Fatal(err)
		}
		var sum time.Duration
		const n = 20000
		for range n {
			sum += d.Draw()
		}
		got := sum / n
		if got < mean*95/100 || got > mean*105/100 {
			t.Errorf("%s: sample mean %v, want %v ± 5%%", spec, got, mean)
		}
	}
}
