package history

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/report/htmlcheck"
)

// TestHistoryPageInChromium: history.html opens offline in Chromium
// without a console error, draws a trend per headline figure with the SLO
// line and the change point, and links each run to its report.
func TestHistoryPageInChromium(t *testing.T) {
	bin, err := htmlcheck.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	root := t.TempDir()
	nightly(t, root, 12, func(i int) float64 {
		if i >= 6 {
			return 1350 + rng.NormFloat64()*40
		}
		return 350 + rng.NormFloat64()*15
	})
	h := analyze(t, root)
	out := filepath.Join(t.TempDir(), "page")
	paths, err := h.WriteFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	page := paths[1]
	dom, console, err := htmlcheck.Load(bin, page, t.TempDir(), "--dump-dom")
	if err != nil {
		t.Fatal(err)
	}
	if len(console) > 0 {
		t.Errorf("console: %q", console)
	}
	if n := strings.Count(dom, `<svg class="trend plot"`); n != 3 {
		t.Errorf("%d trends in the DOM, want 3 (pod_startup p99, pods, the run's duration)", n)
	}
	for _, want := range []string{`<g class="change worse">`, `<g class="threshold`, `id="verdict"`, "Regressed in the newest runs"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %s", want)
		}
	}
	links := regexp.MustCompile(`href="([^"]+/report\.html)"`).FindAllStringSubmatch(dom, -1)
	if len(links) < 12 {
		t.Fatalf("%d links to runs' reports, want one per run at least", len(links))
	}
	for _, l := range links {
		target := filepath.Clean(filepath.Join(out, filepath.FromSlash(l[1])))
		if _, err := os.Stat(filepath.Join(filepath.Dir(target), report.SummaryFile)); err != nil {
			t.Errorf("link %s does not lead to a run's folder: %v", l[1], err)
			break
		}
	}

	// The detector: a page that tries to run a script must be caught, or
	// the clean load above proves nothing.
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(out, "bad.html")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(data), "</main>", "<script>notDefined()</script></main>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console, err := htmlcheck.Load(bin, bad, t.TempDir(), "--dump-dom"); err != nil || len(console) == 0 {
		t.Fatalf("Chromium did not report the blocked script (err %v): the console check would be blind", err)
	}
}
