package fleet

import (
	"context"
	"k8s.io/utils/clock"
	"testing"
	"time"
)

func TestProcsFor(t *testing.T) {
	for _, tc := range []struct{ nodes, available, want int }{
		{nodes: 1, available: 8, want: 1},
		{nodes: 200, available: 2, want: 1},
		{nodes: 5000, available: 2, want: 1},
		{nodes: 5001, available: 2, want: 2},
		{nodes: 20000, available: 2, want: 2}, // never more than the machine gives
		{nodes: 20000, available: 16, want: 4},
		{nodes: 0, available: 0, want: 1},
	} {
		if got := procsFor(tc.nodes, tc.available); got != tc.want {
			t.Errorf("procsFor(%d nodes, %d available) = %d, want %d", tc.nodes, tc.available, got, tc.want)
		}
	}
}

// TestAfterStartup: release runs once, only after start-up has been over for
// two checks in a row, and never after the fleet stopped.
func TestAfterStartup(t *testing.T) {
	for _, tc := range []struct {
		name     string
		checks   []bool // what over() answers, check by check
		released bool
		asked    int // checks made
	}{
		{"over at once", []bool{true, true, true, true}, true, 2},
		{"a check not over starts again", []bool{true, false, true, false, true, true, true}, true, 6},
		{"never over twice in a row", []bool{false, true, false, true, false}, false, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			asked, releases := 0, 0
			over := func() bool {
				if asked == len(tc.checks) { // stopped; a tick may still be taken
					return false
				}
				asked++
				if asked == len(tc.checks) {
					cancel() // the fleet stops after the last answer
				}
				return tc.checks[asked-1]
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				afterStartup(ctx, clock.RealClock{}, time.Millisecond, over, func() { releases++ })
			}()
			<-done
			if releases != map[bool]int{true: 1}[tc.released] || asked != tc.asked {
				t.Errorf("released %d times after %d checks; want released=%v after %d", releases, asked, tc.released, tc.asked)
			}
		})
	}
}
