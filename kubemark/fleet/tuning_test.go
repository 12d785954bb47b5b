package fleet

import "testing"

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
