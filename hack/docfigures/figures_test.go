package docfigures

import (
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/golden"
)

// TestFiguresReference: docs/img/ holds the figures drawn from
// results/bench, and nothing else.
func TestFiguresReference(t *testing.T) {
	files, err := NightlySeries("../../results/bench")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !strings.Contains(string(b), `class="change worse"`) && strings.Contains(name, "delayed") {
			t.Errorf("%s: the delayed series has no worse change point drawn", name)
		}
	}
	golden.CheckDir(t, "../../docs/img", files)
}
