package local

import (
	"strings"
	"testing"
)

func TestSizeFor(t *testing.T) {
	for _, tc := range []struct {
		cores, qps, pods int
		classic          bool
	}{
		{1, 20, 5, false},
		{2, 40, 10, false},
		{4, 80, 20, false},
		{5, 100, 25, false},
		{6, 100, 30, true},
		{64, 100, 30, true},
		{0, 20, 5, false},
	} {
		s := SizeFor(tc.cores)
		if s.ControllerManagerQPS != tc.qps || s.PodsPerNode != tc.pods || s.Classic() != tc.classic {
			t.Errorf("SizeFor(%d) = %+v classic %v, want QPS %d, %d pods per node, classic %v", tc.cores, s, s.Classic(), tc.qps, tc.pods, tc.classic)
		}
		if !s.Classic() && !strings.Contains(s.String(), "--pods-per-node=30") {
			t.Errorf("%q does not say how to get the classic run", s)
		}
	}
}
