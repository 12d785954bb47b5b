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

func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		cores, nodes, pods int
		want               string
	}{
		{2, 100, 1500, ""},
		{2, 1000, 11000, ""},
		{2, 2001, 100, "holds at most 2000 nodes and 12000 pods"},
		{2, 5000, 55000, "--provider=kubemark"},
		{8, 5000, 48000, ""},
	} {
		err := SizeFor(tc.cores).Holds(tc.nodes, tc.pods)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d cores, %d nodes, %d pods: %v", tc.cores, tc.nodes, tc.pods, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%d cores, %d nodes, %d pods: %v, want an error saying %q", tc.cores, tc.nodes, tc.pods, err, tc.want)
		}
	}
}
